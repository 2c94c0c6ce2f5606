#include "cli/report/trend/trend.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <tuple>

namespace memprof::report::trend {
namespace {

constexpr double kSecondsPerHour = 3600;

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// Function name -> its value in each snapshot (0 where it is absent).
std::map<std::string, std::vector<double>> Series(const std::vector<Snapshot>& snapshots) {
  std::map<std::string, std::vector<double>> series;
  for (size_t i = 0; i < snapshots.size(); ++i) {
    for (const aggregate::FunctionRow& row : snapshots[i].functions) {
      auto [it, inserted] = series.try_emplace(row.name, snapshots.size(), 0.0);
      it->second[i] += row.flat;
    }
  }
  return series;
}

TrendRow MakeRow(std::string function, std::vector<double> values,
                 const std::vector<double>& hours) {
  TrendRow row;
  row.function = std::move(function);
  const LineFit fit = FitLine(hours, values);
  row.growth_per_hour = fit.slope;
  row.r_squared = fit.r_squared;
  row.first = values.front();
  row.last = values.back();
  row.verdict = Classify(values, fit);
  row.values = std::move(values);
  return row;
}

bool RanksBefore(const TrendRow& a, const TrendRow& b) {
  return std::tuple(static_cast<int>(a.verdict), -a.growth_per_hour, a.function) <
         std::tuple(static_cast<int>(b.verdict), -b.growth_per_hour, b.function);
}

}  // namespace

std::string_view VerdictText(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSteadyGrowth: return "steady growth";
    case Verdict::kStep: return "one-off step";
    case Verdict::kNoise: break;
  }
  return "noise";
}

std::string_view VerdictKey(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSteadyGrowth: return "steady_growth";
    case Verdict::kStep: return "one_off_step";
    case Verdict::kNoise: break;
  }
  return "noise";
}

LineFit FitLine(const std::vector<double>& xs, const std::vector<double>& ys) {
  const double mean_x = Mean(xs);
  const double mean_y = Mean(ys);
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
    sxx += (xs[i] - mean_x) * (xs[i] - mean_x);
    sxy += (xs[i] - mean_x) * (ys[i] - mean_y);
    syy += (ys[i] - mean_y) * (ys[i] - mean_y);
  }
  LineFit fit;
  if (!(sxx > 0)) return fit;
  fit.slope = sxy / sxx;
  if (syy > 0) fit.r_squared = std::clamp(sxy * sxy / (sxx * syy), 0.0, 1.0);
  if (!std::isfinite(fit.slope)) fit = {};
  return fit;
}

Verdict Classify(const std::vector<double>& values, const LineFit& fit) {
  double movement = 0;
  double largest = 0;
  for (size_t i = 1; i < values.size(); ++i) {
    const double change = std::fabs(values[i] - values[i - 1]);
    movement += change;
    largest = std::max(largest, change);
  }
  if (!(movement > 0) || !std::isfinite(movement)) return Verdict::kNoise;
  if (largest >= kStepShare * movement) return Verdict::kStep;
  if (fit.slope > 0 && fit.r_squared >= kSteadyFit) return Verdict::kSteadyGrowth;
  return Verdict::kNoise;
}

Result<std::vector<TrendRow>> ComputeTrend(const std::vector<Snapshot>& snapshots) {
  if (snapshots.size() < kMinTrendDumps) {
    return Fail(ErrorCode::kInvalidArgument,
                "--trend needs at least " + std::to_string(kMinTrendDumps) + " dumps to fit a line, got " +
                    std::to_string(snapshots.size()));
  }
  std::vector<double> hours;
  for (const Snapshot& snapshot : snapshots) {
    hours.push_back((snapshot.time_seconds - snapshots.front().time_seconds) / kSecondsPerHour);
  }
  if (std::all_of(hours.begin(), hours.end(), [](double h) { return h == 0; })) {
    return Fail(ErrorCode::kInvalidArgument,
                "--trend: all dumps have the same time; a growth rate needs dumps taken at "
                "different times");
  }
  std::vector<TrendRow> rows;
  for (auto& [function, values] : Series(snapshots)) {
    rows.push_back(MakeRow(function, std::move(values), hours));
  }
  std::sort(rows.begin(), rows.end(), RanksBefore);
  return rows;
}

}  // namespace memprof::report::trend
