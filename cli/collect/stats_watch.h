#ifndef MEMPROF_CLI_COLLECT_STATS_WATCH_H_
#define MEMPROF_CLI_COLLECT_STATS_WATCH_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <stop_token>

#include "cli/client/profile_client.h"
#include "cli/client/target.h"
#include "cli/collect/interval_ticker.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `stats --watch DURATION [--count N]`: a Stats reading per period, with the
// change since the previous one.
struct StatsWatchPlan {
  enum class Output {
    kLiveTable,  // a terminal: one table, redrawn in place
    kTables,     // --format table on a pipe: one table after the other
    kJsonLines,  // one JSON object per line (WatchSampleToJson)
  };
  std::chrono::milliseconds every{0};
  uint64_t count = 0;  // 0: until SIGINT/SIGTERM
  Output output = Output::kJsonLines;
};

struct StatsWatchClocks {
  TickClock ticks = SteadyTickClock();
  std::function<std::chrono::system_clock::time_point()> wall = [] {
    return std::chrono::system_clock::now();
  };
};

// Reads and prints until `count` readings or a stop request (success either
// way; each reading is flushed as it is printed). A failed reading ends the
// run with its error; kNotFound, saying so, when the target has gone away.
[[nodiscard]] Result<void> RunStatsWatch(const StatsWatchPlan& plan, const Target& target,
                                         const TargetDiscovery& discovery, ProfileClient& client,
                                         std::ostream& out, const std::stop_token& stop,
                                         const StatsWatchClocks& clocks = {});

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_STATS_WATCH_H_
