#include "cli/report/trend/trend_report.h"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/report/render/report_format.h"
#include "common/json_schema_versions.h"

namespace memprof::report::trend {
namespace {

std::string MetricName(report::Metric metric) {
  switch (metric) {
    case report::Metric::kInuseSpace: return "inuse_space";
    case report::Metric::kInuseObjects: return "inuse_objects";
    case report::Metric::kAllocSpace: return "alloc_space";
    case report::Metric::kAllocObjects: return "alloc_objects";
  }
  return "inuse_space";
}

std::string UtcTime(double seconds) {
  // Beyond year ±5000 (only a corrupt time gets there) the cast would overflow.
  constexpr double kLimit = 1e11;
  if (!(seconds > -kLimit && seconds < kLimit)) return "?";
  const std::time_t whole = static_cast<std::time_t>(seconds);
  std::tm utc{};
  if (gmtime_r(&whole, &utc) == nullptr) return std::to_string(seconds);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &utc);
  return buf;
}

std::string Span(double seconds) {
  char buf[32];
  if (seconds < 120) {
    std::snprintf(buf, sizeof(buf), "%.0f s", seconds);
  } else if (seconds < 2 * 3600) {
    std::snprintf(buf, sizeof(buf), "%.1f min", seconds / 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f h", seconds / 3600);
  }
  return buf;
}

std::string PadLeft(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string PadRight(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string TwoDecimals(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", value);
  return buf;
}

void WriteHeader(const TrendResult& trend, bool bytes, std::ostream& out) {
  const double first = trend.dumps.front().time.seconds;
  const double last = trend.dumps.back().time.seconds;
  out << "Trend over " << trend.dumps.size() << " dumps, " << UtcTime(first) << " .. "
      << UtcTime(last) << " UTC (" << Span(last - first) << "), " << MetricName(trend.metric)
      << " in " << render::UnitName(trend.metric, bytes) << '\n';
  out << PadLeft("growth/h", 10) << ' ' << PadLeft("R2", 5) << ' ' << PadLeft("first", 9) << ' '
      << PadLeft("last", 9) << "  " << PadRight("verdict", 14) << " function\n";
}

}  // namespace

Result<void> RenderTrendText(const TrendResult& trend, const TrendReportOptions& options,
                             std::ostream& out) {
  if (trend.dumps.empty()) return {};
  const bool bytes = options.show_bytes;
  WriteHeader(trend, bytes, out);
  size_t printed = 0;
  for (const TrendRow& row : trend.rows) {
    if (options.top && printed >= *options.top) break;
    out << PadLeft(render::FormatValue(row.growth_per_hour, trend.metric, bytes), 10) << ' '
        << PadLeft(TwoDecimals(row.r_squared), 5) << ' '
        << PadLeft(render::FormatValue(row.first, trend.metric, bytes), 9) << ' '
        << PadLeft(render::FormatValue(row.last, trend.metric, bytes), 9) << "  "
        << PadRight(std::string(VerdictText(row.verdict)), 14) << ' ' << row.function << '\n';
    ++printed;
  }
  out.flush();
  if (!out) return Fail(ErrorCode::kInternal, "writing the report failed");
  return {};
}

Result<void> RenderTrendJson(const TrendResult& trend, const TrendReportOptions& options,
                             std::ostream& out) {
  nlohmann::json dumps = nlohmann::json::array();
  for (const TrendDump& dump : trend.dumps) {
    dumps.push_back({{"path", dump.path},
                     {"time_unix_s", dump.time.seconds},
                     {"time_source", SourceName(dump.time.source)}});
  }
  nlohmann::json sites = nlohmann::json::array();
  for (const TrendRow& row : trend.rows) {
    if (options.top && sites.size() >= *options.top) break;
    sites.push_back({{"function", row.function},
                     {"growth_per_hour", row.growth_per_hour},
                     {"r_squared", row.r_squared},
                     {"first", row.first},
                     {"last", row.last},
                     {"verdict", VerdictKey(row.verdict)},
                     {"values", row.values}});
  }
  nlohmann::json document = {{"schema_version", kTrendJsonVersion},
                             {"metric", MetricName(trend.metric)},
                             {"dumps", dumps},
                             {"call_sites", sites}};
  out << document.dump(2) << '\n';
  out.flush();
  if (!out) return Fail(ErrorCode::kInternal, "writing the report failed");
  return {};
}

}  // namespace memprof::report::trend
