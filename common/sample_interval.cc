#include "common/sample_interval.h"

#include <bit>
#include <string>

namespace memprof {

Result<unsigned> SampleIntervalLg(uint64_t bytes) {
  const std::string what = "sample interval of " + std::to_string(bytes) + " bytes";
  if (bytes < kMinSampleIntervalBytes || bytes > kMaxSampleIntervalBytes) {
    return Fail(ErrorCode::kInvalidArgument, what + " is outside 1 byte..1 GiB (2^0..2^" +
                                                 std::to_string(kMaxLgSampleInterval) + " bytes)");
  }
  if (!std::has_single_bit(bytes)) {
    return Fail(ErrorCode::kInvalidArgument,
                what + " is not a power of two (jemalloc samples every 2^n bytes on average)");
  }
  return static_cast<unsigned>(std::countr_zero(bytes));
}

}  // namespace memprof
