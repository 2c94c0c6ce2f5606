#ifndef MEMPROF_CLI_REPORT_TREND_TREND_REPORT_H_
#define MEMPROF_CLI_REPORT_TREND_TREND_REPORT_H_

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/report/model/profile.h"
#include "cli/report/trend/dump_time.h"
#include "cli/report/trend/trend.h"
#include "common/result.h"

namespace memprof::report::trend {

// One dump of the series as the reports name it.
struct TrendDump {
  std::string path;
  DumpTime time;
};

// Everything `report --trend` prints.
struct TrendResult {
  report::Metric metric = report::Metric::kInuseSpace;
  std::vector<TrendDump> dumps;  // time order
  std::vector<TrendRow> rows;    // ranked (ComputeTrend)
};

struct TrendReportOptions {
  bool show_bytes = false;    // bytes instead of MiB
  std::optional<size_t> top;  // at most this many rows
};

// A table, best leak candidate first:
//   Trend over 5 dumps, 2026-11-25 05:00:00 .. 05:04:00 UTC (4.0 min), inuse_space
//   growth/h       R²   first    last  verdict        function
// Fails (kInternal) only when writing fails.
[[nodiscard]] Result<void> RenderTrendText(const TrendResult& trend,
                                           const TrendReportOptions& options, std::ostream& out);

// {"metric", "dumps": [{"path", "time_unix_s", "time_source"}],
//  "call_sites": [{"function", "growth_per_hour", "r_squared", "first",
//  "last", "verdict", "values": [...]}]}; values in the metric's unit.
[[nodiscard]] Result<void> RenderTrendJson(const TrendResult& trend,
                                           const TrendReportOptions& options, std::ostream& out);

}  // namespace memprof::report::trend

#endif  // MEMPROF_CLI_REPORT_TREND_TREND_REPORT_H_
