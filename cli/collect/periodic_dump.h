#ifndef MEMPROF_CLI_COLLECT_PERIODIC_DUMP_H_
#define MEMPROF_CLI_COLLECT_PERIODIC_DUMP_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/client/target.h"
#include "cli/collect/interval_ticker.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `dump --out-dir DIR [--every D [--count N]]`: heap profiles (or their
// reports) written into DIR under generated names (DumpFileName), one per
// tick of a fixed-rate schedule.
struct PeriodicDumpPlan {
  std::string out_dir;
  std::chrono::milliseconds every{0};  // 0: a single dump
  uint64_t count = 1;                  // 0: until SIGINT/SIGTERM
  std::string format = "heap";         // "heap" or a report format
  bool json = false;                   // one JSON line per dump on stdout
  std::string host;                    // file-safe host name for the names
};

// The outside world of a periodic run, replaced in tests.
struct PeriodicDumpClocks {
  TickClock ticks = SteadyTickClock();
  std::function<std::chrono::system_clock::time_point()> wall = [] {
    return std::chrono::system_clock::now();
  };
};

// "heap" for a raw profile, else the file extension of the report format.
std::string DumpFileExtension(const std::string& format);

// The path in `dir` under `name(attempt)` that no file has yet, for attempt
// 0, 1, 2, ... (up to 100).
std::string UnusedPath(const std::string& dir, const std::function<std::string(int)>& name);

// The path in `dir` under DumpFileName (host, pid, time, the format's
// extension) that no file has yet, trying "-1", "-2", ... suffixes.
std::string UnusedDumpPath(const std::string& dir, const std::string& host, pid_t pid,
                           std::chrono::system_clock::time_point time, const std::string& format);

// DIR must exist, be a directory and be writable: checked (by creating an
// unnamed file in it) before any agent is contacted. kInvalidArgument for a
// missing directory or a non-directory, kPermissionDenied when it cannot be
// written.
[[nodiscard]] Result<void> CheckOutputDirectory(const std::string& dir,
                                                const std::string& flag = "--out-dir");

// Runs the plan against `target`. Each dump has the guarantees of `dump
// --out` (unnamed temp file in DIR, size and SHA-256 verified, fsynced, then
// linked in) and never replaces an existing file: a taken name gets a
// "-1", "-2", ... suffix. A stop request ends the run cleanly, between
// dumps or during one (that dump is discarded): the result is success, and
// the files written so far stay. Any failure ends the run with that error
// (kNotFound when the target has exited meanwhile), and its message says how
// many dumps were written and kept.
[[nodiscard]] Result<void> RunPeriodicDump(const PeriodicDumpPlan& plan, const Target& target,
                                           const TargetDiscovery& discovery, ProfileClient& client,
                                           const Console& console, const std::stop_token& stop,
                                           const PeriodicDumpClocks& clocks = {});

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_PERIODIC_DUMP_H_
