#ifndef MEMPROF_COMMON_SAMPLE_INTERVAL_H_
#define MEMPROF_COMMON_SAMPLE_INTERVAL_H_

#include <cstdint>

#include "common/result.h"

namespace memprof {

// Bounds of jemalloc's sample interval as memprof lets it be set: 2^0 (every
// byte; very slow) to 2^30 (1 GiB; almost nothing sampled). jemalloc samples
// on average once every 2^lg_sample bytes, so only powers of two exist.
inline constexpr unsigned kMaxLgSampleInterval = 30;
inline constexpr uint64_t kMinSampleIntervalBytes = 1;
inline constexpr uint64_t kMaxSampleIntervalBytes = uint64_t{1} << kMaxLgSampleInterval;

// The jemalloc lg_sample of `bytes`, which must be a power of two within
// [kMinSampleIntervalBytes, kMaxSampleIntervalBytes]; otherwise
// kInvalidArgument with a message that says which rule was broken.
[[nodiscard]] Result<unsigned> SampleIntervalLg(uint64_t bytes);

}  // namespace memprof

#endif  // MEMPROF_COMMON_SAMPLE_INTERVAL_H_
