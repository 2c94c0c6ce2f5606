#ifndef MEMPROF_CLI_COMMANDS_DUMP_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_DUMP_COMMAND_H_

#include <memory>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>

#include "cli/client/dump_receiver.h"
#include "cli/client/dump_transfer.h"
#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl dump [--pid N] --out FILE|- [--json]`: stream a heap profile
// (jemalloc heap_v2) from the agent into FILE, or to stdout for "-".
// `dump --out-dir DIR [--every DURATION [--count N]]`: timestamped files in
// DIR, one now or one per period (see periodic_dump.h).
// `dump --captured --out-dir DIR`: the peak captures the agent holds (see
// captured_dump.h).
struct DumpOptions {
  TargetOptions target;
  std::string out;
  std::string out_dir;
  std::string every;   // a duration (validated by CLI11), "" = one dump
  uint64_t count = 0;  // with --every: 0 = until SIGINT/SIGTERM
  // "heap" (the raw heap_v2 profile, default) or a `report` format: the
  // profile is then analysed right away, on this host, where the target's
  // binaries are (read through /proc/<pid>), and only the report is written.
  std::string format = "heap";
  bool captured = false;  // --captured: the agent's peak captures into --out-dir
  bool follow = false;    // --follow (with --captured): each capture as it is taken
  bool force = false;     // --force: replace an existing --out FILE
};

CLI::App* RegisterDumpCommand(CLI::App& app, DumpOptions& options);

// The output file is created (as a temp file next to FILE) before the agent
// is contacted, written chunk by chunk, verified against the trailer (size,
// SHA-256), then fsynced and renamed into place. On any failure, or when
// `stop` is requested (SIGINT/SIGTERM), the temp file is removed and FILE is
// untouched. The human summary goes to console.err, --json to console.out.
// With --out-dir, the run follows RunPeriodicDump instead, and a stop
// request ends it successfully.
[[nodiscard]] Result<void> RunDump(const DumpOptions& options, TargetDiscovery& discovery,
                                   ProfileClient& client, const Console& console,
                                   std::stop_token stop);

// Bounds of --every: as often as once a second (a dump costs the target a
// walk of its sampled stacks), as rarely as once a day.
inline constexpr std::chrono::milliseconds kMinDumpEvery = std::chrono::seconds(1);
inline constexpr std::chrono::milliseconds kMaxDumpEvery = std::chrono::hours(24);
inline constexpr uint64_t kMaxDumpCount = 1000000;

// The `dump` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeDumpCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_DUMP_COMMAND_H_
