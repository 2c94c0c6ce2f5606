#include "cli/collect/stats_watch_renderer.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "cli/client/profiling_format.h"
#include "cli/io/human_format.h"
#include "cli/io/text_table.h"
#include "common/duration.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

double Fragmentation(const MemoryFigures& f) {
  if (f.active == 0 || f.allocated >= f.active) return 0.0;
  return static_cast<double>(f.active - f.allocated) / static_cast<double>(f.active);
}

std::string ClockTime(int64_t unix_ms) {
  const std::string local = FormatLocalTime(unix_ms);  // "2026-11-22 12:34:56"
  const size_t space = local.find(' ');
  return space == std::string::npos ? local : local.substr(space + 1);
}

}  // namespace

std::string FormatSignedBytes(int64_t bytes) {
  if (bytes == 0) return "0 B";
  // Negating INT64_MIN overflows; go through the unsigned magnitude.
  const uint64_t magnitude =
      bytes < 0 ? 0 - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);
  return (bytes < 0 ? "-" : "+") + FormatBytes(magnitude);
}

std::string FormatByteRate(double bytes_per_second) {
  const double rounded = std::round(bytes_per_second);
  if (!std::isfinite(rounded) || std::fabs(rounded) >= 9.2e18) return "n/a";
  return FormatSignedBytes(static_cast<int64_t>(rounded)) + "/s";
}

nlohmann::json WatchSampleToJson(const Target& target, uint64_t sample_number,
                                 const StatsSample& sample, const StatsDelta& delta) {
  nlohmann::json line = {{"schema_version", kStatsWatchJsonVersion},
                         {"pid", target.pid},
                         {"allocator", AllocatorName(sample.allocator)},
                         {"sample", sample_number},
                         {"unix_ms", sample.unix_ms},
                         {"interval_seconds", delta.interval_seconds}};
  nlohmann::json change = nlohmann::json::object();
  nlohmann::json rate = nlohmann::json::object();
  const auto& fields = FigureFields();
  for (size_t i = 0; i < fields.size(); ++i) {
    line[fields[i].key] = sample.figures.*fields[i].value;
    change[fields[i].key] = delta.change[i];
    rate[fields[i].key] = delta.per_second[i];  // a double: always a JSON float
  }
  line["fragmentation_ratio"] = Fragmentation(sample.figures);
  line["delta"] = std::move(change);
  line["per_second"] = std::move(rate);
  return line;
}

std::string RenderWatchTable(const Target& target, std::chrono::milliseconds every,
                             uint64_t sample_number, const StatsSample& sample,
                             const StatsDelta& delta) {
  std::ostringstream out;
  out << DescribeTarget(target) << ", " << AllocatorName(sample.allocator) << ": sample "
      << sample_number << " at " << ClockTime(sample.unix_ms) << ", every "
      << FormatDuration(every) << " (Ctrl-C to stop)\n";
  const bool first = sample_number <= 1;
  TextTable table({"", "NOW", "CHANGE", "PER SECOND", ""});
  for (size_t column : {1, 2, 3}) table.SetAlign(column, TextTable::Align::kRight);
  const auto& fields = FigureFields();
  for (size_t i = 0; i < fields.size(); ++i) {
    table.AddRow({fields[i].label, FormatBytes(sample.figures.*fields[i].value),
                  first ? "-" : FormatSignedBytes(delta.change[i]),
                  first ? "-" : FormatByteRate(delta.per_second[i]), fields[i].meaning});
  }
  table.AddRow({"fragmentation", FormatPercent(Fragmentation(sample.figures)), "", "",
                "(active - allocated) / active"});
  std::ostringstream rows;
  table.Print(rows);
  // The unlabelled last column leaves padding at the end of the header.
  std::istringstream lines(rows.str());
  for (std::string line; std::getline(lines, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  }
  return out.str();
}

size_t LineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::string RedrawPrefix(size_t lines) {
  if (lines == 0) return "";
  // CSI n F: cursor to the start of the line n lines up; CSI J: clear below.
  return "\x1b[" + std::to_string(lines) + "F\x1b[J";
}

}  // namespace memprof::cli
