#ifndef MEMPROF_CLI_COMMANDS_STATS_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_STATS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/commands/target_options.h"
#include "cli/profile_client.h"
#include "cli/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl stats [--pid N] [--json | --raw]`: allocator statistics.
struct StatsOptions {
  TargetOptions target;
  bool raw = false;  // the allocator's own text report, verbatim
};

CLI::App* RegisterStatsCommand(CLI::App& app, StatsOptions& options);

[[nodiscard]] Result<void> RunStats(const StatsOptions& options, TargetDiscovery& discovery,
                                    ProfileClient& client, std::ostream& out);

// (active - allocated) / active, 0 when nothing is active.
double FragmentationRatio(const memprof::v1::StatsSummary& summary);

// The --json object. For a jemalloc target the agent's malloc_stats_print
// JSON is parsed and embedded under "jemalloc" (the object inside jemalloc's
// own top-level {"jemalloc": ...}); if it does not parse, this fails
// (kInternal) rather than print broken JSON.
[[nodiscard]] Result<nlohmann::json> StatsToJson(const memprof::v1::StatsResponse& stats,
                                                 pid_t pid);

// The short table for people.
void PrintStats(const memprof::v1::StatsResponse& stats, std::ostream& out);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_STATS_COMMAND_H_
