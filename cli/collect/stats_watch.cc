#include "cli/collect/stats_watch.h"

#include <optional>
#include <string>

#include "cli/client/memory_figures.h"
#include "cli/collect/run_end.h"
#include "cli/collect/stats_watch_renderer.h"
#include "cli/io/human_format.h"

namespace memprof::cli {
namespace {

using Output = StatsWatchPlan::Output;

// Prints one reading; returns the number of lines a live table took.
size_t Print(const StatsWatchPlan& plan, const Target& target, uint64_t number,
             const StatsSample& sample, const StatsDelta& delta, size_t previous_lines,
             std::ostream& out) {
  if (plan.output == Output::kJsonLines) {
    out << WatchSampleToJson(target, number, sample, delta).dump() << '\n';
    return 0;
  }
  const std::string table = RenderWatchTable(target, plan.every, number, sample, delta);
  if (plan.output == Output::kLiveTable) {
    out << RedrawPrefix(previous_lines) << table;
  } else {
    out << (number > 1 ? "\n" : "") << table;
  }
  return LineCount(table);
}

std::string Progress(uint64_t readings) {
  return "stopped after " + std::to_string(readings) +
         (readings == 1 ? " reading" : " readings");
}

}  // namespace

Result<void> RunStatsWatch(const StatsWatchPlan& plan, const Target& target,
                           const TargetDiscovery& discovery, ProfileClient& client,
                           std::ostream& out, const std::stop_token& stop,
                           const StatsWatchClocks& clocks) {
  IntervalTicker ticker(plan.every, clocks.ticks);
  memprof::v1::StatsRequest request;  // the summary only: no raw report
  std::optional<StatsSample> previous;
  uint64_t readings = 0;
  size_t lines = 0;
  while (plan.count == 0 || readings < plan.count) {
    if (!ticker.WaitNext(stop)) break;
    auto stats = client.Stats(target, request);
    if (!stats) {
      if (stop.stop_requested()) break;
      return Fail(ExplainEndOfRun(stats.error(), target, discovery, Progress(readings)));
    }
    const StatsSample sample{clocks.ticks.now(), ToUnixMillis(clocks.wall()), stats->allocator(),
                             FiguresOf(*stats)};
    const StatsDelta delta = previous ? ComputeDelta(*previous, sample) : StatsDelta{};
    lines = Print(plan, target, ++readings, sample, delta, lines, out);
    out.flush();
    if (!out) return Fail(ErrorCode::kInternal, "cannot write to stdout");
    previous = sample;
  }
  return {};
}

}  // namespace memprof::cli
