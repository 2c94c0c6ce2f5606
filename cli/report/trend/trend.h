#ifndef MEMPROF_CLI_REPORT_TREND_TREND_H_
#define MEMPROF_CLI_REPORT_TREND_TREND_H_

#include <string>
#include <string_view>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "common/result.h"

namespace memprof::report::trend {

// The verdict on one call site's series of values (docs/user-guide.md,
// "Trends"), decided in this order:
//   noise          the value never changes, or none of the rules below hold
//   one-off step   one change between two consecutive dumps is at least
//                  kStepShare of all the movement (sum of |changes|): the
//                  series jumps once and otherwise stays put
//   steady growth  growth rate > 0 and R² >= kSteadyFit: it rises along a line
// A series that falls steadily is "noise" too: it is not what a leak hunt
// looks for.
enum class Verdict { kSteadyGrowth, kStep, kNoise };

inline constexpr double kStepShare = 0.6;
inline constexpr double kSteadyFit = 0.8;

// "steady growth", "one-off step", "noise".
std::string_view VerdictText(Verdict verdict);
// The JSON spelling: "steady_growth", "one_off_step", "noise".
std::string_view VerdictKey(Verdict verdict);

// A least-squares line through (x, y).
struct LineFit {
  double slope = 0;      // y per unit of x
  double r_squared = 0;  // 0 when y never changes (nothing to explain)
};

// Needs xs.size() == ys.size() and xs not all equal (else slope 0, R² 0).
LineFit FitLine(const std::vector<double>& xs, const std::vector<double>& ys);

Verdict Classify(const std::vector<double>& values, const LineFit& fit);

// One dump of the series: when it was taken (seconds since the epoch) and
// its text-report rows (function -> flat value).
struct Snapshot {
  double time_seconds = 0;
  std::vector<aggregate::FunctionRow> functions;
};

// One call site (the allocating function, as the text report's rows) over
// the dumps, in time order. A function missing from a dump counts as 0.
struct TrendRow {
  std::string function;
  std::vector<double> values;
  double growth_per_hour = 0;  // least-squares slope
  double r_squared = 0;
  double first = 0;
  double last = 0;
  Verdict verdict = Verdict::kNoise;
};

// The rows ranked: steady growth first, then one-off steps, then noise;
// within each, by growth rate (descending), then name. So a slow leak ranks
// above a big, stable allocation that dominates every single dump.
// `snapshots` must be in time order. kInvalidArgument for fewer than 3
// snapshots, or when they were all taken at the same time (no rate).
[[nodiscard]] Result<std::vector<TrendRow>> ComputeTrend(const std::vector<Snapshot>& snapshots);

// The fewest dumps a trend needs: two points always fit a line perfectly.
inline constexpr size_t kMinTrendDumps = 3;

}  // namespace memprof::report::trend

#endif  // MEMPROF_CLI_REPORT_TREND_TREND_H_
