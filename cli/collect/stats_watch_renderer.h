#ifndef MEMPROF_CLI_COLLECT_STATS_WATCH_RENDERER_H_
#define MEMPROF_CLI_COLLECT_STATS_WATCH_RENDERER_H_

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/client/memory_figures.h"
#include "cli/client/target.h"

namespace memprof::cli {

// How `stats --watch` shows its readings. Pure: the loop is in stats_watch.

// One JSON line: pid, allocator, sample (1-based), unix_ms,
// interval_seconds, the figures under their `stats --json` keys,
// fragmentation_ratio, and "delta" (signed integers) and "per_second"
// (floats) objects with the same keys. Types never vary.
nlohmann::json WatchSampleToJson(const Target& target, uint64_t sample_number,
                                 const StatsSample& sample, const StatsDelta& delta);

// The table for people: a title line, a header and one row per figure with
// its value, its change since the previous reading and the rate; then
// fragmentation. Every line ends in '\n' (LineCount counts them).
std::string RenderWatchTable(const Target& target, std::chrono::milliseconds every,
                             uint64_t sample_number, const StatsSample& sample,
                             const StatsDelta& delta);

size_t LineCount(const std::string& text);

// What redraws a terminal frame in place: the cursor goes up over the
// previous frame's `lines` lines and everything below it is cleared.
std::string RedrawPrefix(size_t lines);

// "+1.5 MiB", "-512 B", "0 B".
std::string FormatSignedBytes(int64_t bytes);
// "+64.0 KiB/s", "-1.0 MiB/s", "0 B/s" (rounded to whole bytes).
std::string FormatByteRate(double bytes_per_second);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_STATS_WATCH_RENDERER_H_
