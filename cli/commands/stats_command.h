#ifndef MEMPROF_CLI_COMMANDS_STATS_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_STATS_COMMAND_H_

#include <memory>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <chrono>
#include <cstdint>
#include <ostream>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/collect/stats_watch.h"
#include "cli/commands/command.h"
#include "cli/io/console.h"
#include "cli/targets/multi_target_run.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl stats [--pid N] [--format table|json|raw|prometheus]
// [--watch DURATION [--count N]]`: allocator statistics. --json and --raw
// are the older spellings of --format json / --format raw.
struct StatsOptions {
  TargetOptions target;
  bool raw = false;    // the allocator's own text report, verbatim
  std::string format;  // "" = table, or what --json / --raw say
  std::string watch;   // a duration (validated by CLI11), "" = one reading
  uint64_t count = 0;  // with --watch: 0 = until SIGINT/SIGTERM
};

enum class StatsFormat { kTable, kJson, kRaw, kPrometheus };

// Bounds of --watch.
inline constexpr std::chrono::milliseconds kMinStatsWatch = std::chrono::seconds(1);
inline constexpr std::chrono::milliseconds kMaxStatsWatch = std::chrono::hours(1);
inline constexpr uint64_t kMaxStatsCount = 1000000;

CLI::App* RegisterStatsCommand(CLI::App& app, StatsOptions& options);

// The format asked for: --format, else --json / --raw, else table.
// kInvalidArgument for an unknown --format, naming the valid ones.
[[nodiscard]] Result<StatsFormat> ResolveStatsFormat(const StatsOptions& options);

// How --watch prints: a live table on a terminal that can redraw, one table
// after another on a dumb one (TERM=dumb), JSON lines on a pipe unless
// --format table is explicit. kInvalidArgument for --format raw or
// prometheus, which have no watch mode.
[[nodiscard]] Result<StatsWatchPlan> MakeStatsWatchPlan(const StatsOptions& options,
                                                        bool stdout_is_terminal,
                                                        bool stdout_redraws = true);

// One reading, in the requested format.
// `stats --format prometheus` on several targets: one exposition for all of
// them, in which a target that fails is memprof_up 0 (and the run exit 6).
[[nodiscard]] Result<void> RunStatsPrometheusOnTargets(const TargetSelection& selection,
                                                       const MultiTargetPlan& plan,
                                                       const TargetDiscovery& discovery,
                                                       const StoppableClientFactory& make_client,
                                                       const Console& console,
                                                       const std::stop_token& stop);

[[nodiscard]] Result<void> RunStats(const StatsOptions& options, TargetDiscovery& discovery,
                                    ProfileClient& client, std::ostream& out);

// RunStats, or RunStatsWatch with --watch (which a stop request ends
// successfully).
[[nodiscard]] Result<void> RunStatsCommand(const StatsOptions& options, TargetDiscovery& discovery,
                                           ProfileClient& client, std::ostream& out,
                                           bool stdout_is_terminal, bool stdout_redraws,
                                           const std::stop_token& stop);

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

// The `stats` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeStatsCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_STATS_COMMAND_H_
