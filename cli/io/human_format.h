#ifndef MEMPROF_CLI_IO_HUMAN_FORMAT_H_
#define MEMPROF_CLI_IO_HUMAN_FORMAT_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace memprof::cli {

// Formatting for people (the --json output never uses these).

// Binary units with one decimal: "0 B", "512 B", "1.0 KiB", "12.3 MiB", "2.0 GiB".
std::string FormatBytes(uint64_t bytes);

// A Unix time in milliseconds as local time, "2026-11-22 12:34:56".
std::string FormatLocalTime(int64_t unix_ms);

// How far `unix_ms` is from `now`, rounded to seconds: "in 5m", "3m20s ago", "now".
std::string FormatRelative(int64_t unix_ms, std::chrono::system_clock::time_point now);

// A ratio as a percentage with one decimal: 0.054 -> "5.4%".
std::string FormatPercent(double ratio);

// Milliseconds since the Unix epoch.
int64_t ToUnixMillis(std::chrono::system_clock::time_point t);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_HUMAN_FORMAT_H_
