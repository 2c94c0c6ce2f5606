#ifndef MEMPROF_CLI_IO_BYTE_SIZE_H_
#define MEMPROF_CLI_IO_BYTE_SIZE_H_

#include <cstdint>
#include <string_view>

#include "common/result.h"

namespace memprof::cli {

// The forms a size may take on the command line, for help and error texts.
inline constexpr char kByteSizeForms[] =
    "a whole number of bytes, optionally with a binary unit: 4096, 64KiB, 512KiB, 1MiB "
    "(units B, KiB, MiB, GiB)";

// Parses a size: digits, then optionally a unit B, KiB, MiB or GiB (any
// letter case; 1 KiB = 1024 B). Rejected, with a message that says why and
// lists the valid forms: signs, fractions ("1.5MiB"), SI or bare-letter units
// ("64KB", "64k": is that 1000 or 1024?), anything else, and values that do
// not fit in 64 bits. Errors are kInvalidArgument.
[[nodiscard]] Result<uint64_t> ParseByteSize(std::string_view text);

// The power of two nearest to `bytes` (ties round up); `bytes` itself when
// it is one. 0 gives 1.
uint64_t NearestPowerOfTwo(uint64_t bytes);

// A --sample-interval as the user wrote it and as it will be applied.
struct SampleIntervalChoice {
  uint64_t requested_bytes = 0;  // the value written, in bytes
  uint64_t bytes = 0;            // rounded to the nearest power of two
  bool rounded() const { return bytes != requested_bytes; }
};

// ParseByteSize, then the bounds (1 B to 1 GiB, checked before rounding), then
// rounding to the nearest power of two (jemalloc samples every 2^n bytes).
[[nodiscard]] Result<SampleIntervalChoice> ParseSampleInterval(std::string_view text);

// Bounds of a peak capture's growth (`activate --capture-growth`).
inline constexpr uint64_t kMinCaptureGrowthBytes = uint64_t{1} << 20;  // 1 MiB
inline constexpr uint64_t kMaxCaptureGrowthBytes = uint64_t{1} << 40;  // 1 TiB

// ParseByteSize, then the bounds 1 MiB to 1 TiB (1024GiB). kInvalidArgument.
[[nodiscard]] Result<uint64_t> ParseCaptureGrowth(std::string_view text);

// A share of the memory limit (`activate --capture-near-limit`): "90%" or
// "90", a whole number from 1 to 99. kInvalidArgument.
[[nodiscard]] Result<uint32_t> ParseNearLimitShare(std::string_view text);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_BYTE_SIZE_H_
