#ifndef MEMPROF_COMMON_DURATION_H_
#define MEMPROF_COMMON_DURATION_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof {

// Bounds of a profiling window (the Mesos lineage: 1 s to 24 h).
inline constexpr std::chrono::milliseconds kMinWindow = std::chrono::seconds(1);
inline constexpr std::chrono::milliseconds kMaxWindow = std::chrono::hours(24);

// Parses a duration that always carries a unit: "500ms", "30s", "5m", "1h",
// or a sum such as "1h30m". Units may be in any letter case ("1H", "10M":
// a duration has no months, so M is minutes) and numbers may have a decimal
// fraction ("1.5s", "0.5h", ".5s") down to whole milliseconds. A bare number
// is rejected (which unit would it be?), as are signs, fractions finer than a
// millisecond and values outside [min, max]. Errors are kInvalidArgument with
// a message that shows valid examples.
[[nodiscard]] Result<std::chrono::milliseconds> ParseDuration(
    std::string_view text, std::chrono::milliseconds min = kMinWindow,
    std::chrono::milliseconds max = kMaxWindow);

// Formats a duration the way ParseDuration reads it, e.g. "1h30m", "45s", "250ms".
std::string FormatDuration(std::chrono::milliseconds d);

// The wall clock in milliseconds since the Unix epoch, as the protocol's
// *_unix_ms fields carry it.
int64_t NowUnixMs();

}  // namespace memprof

#endif  // MEMPROF_COMMON_DURATION_H_
