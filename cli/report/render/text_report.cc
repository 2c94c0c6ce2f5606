#include "cli/report/render/text_report.h"

#include <cstdio>
#include <string>
#include <vector>

#include "cli/report/render/allocation_header.h"
#include "cli/report/render/report_format.h"

namespace memprof::report::render {
namespace {

// printf("%8s %6s %6s %8s %6s %s\n", ...) without printf's length limits.
std::string PadLeft(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// jeprof's columns, named: its own text has no header, which leaves a new
// reader guessing what the two percentages after the first value are.
void WriteHeader(std::ostream& out) {
  out << PadLeft("flat", 8) << ' ' << PadLeft("flat%", 6) << ' ' << PadLeft("sum%", 6) << ' '
      << PadLeft("cum", 8) << ' ' << PadLeft("cum%", 6) << " function\n";
}

}  // namespace

Result<void> TextReportRenderer::Render(const aggregate::Aggregation& aggregation,
                                        std::ostream& out) const {
  Metric metric = aggregation.metric;
  bool bytes = options_.show_bytes;
  if (options_.allocation != nullptr) WriteAllocationHeaderText(*options_.allocation, out);
  if (aggregation.total != 0) {
    out << "Total: " << FormatValue(aggregation.total, metric, bytes) << ' '
        << UnitName(metric, bytes) << '\n';
  }
  std::vector<aggregate::FunctionRow> rows = aggregation.functions;
  if (options_.sort_by_cum) aggregate::SortFunctionRows(rows, true, aggregation.is_diff);
  double total = aggregation.shown_total;
  double running = 0;
  size_t printed = 0;
  for (const aggregate::FunctionRow& row : rows) {
    if (options_.top && printed >= *options_.top) break;
    running += row.flat;
    if (!row.shown()) continue;
    if (printed == 0) WriteHeader(out);
    out << PadLeft(FormatValue(row.flat, metric, bytes), 8) << ' '
        << PadLeft(FormatPercent(row.flat, total), 6) << ' '
        << PadLeft(FormatPercent(running, total), 6) << ' '
        << PadLeft(FormatValue(row.cum, metric, bytes), 8) << ' '
        << PadLeft(FormatPercent(row.cum, total), 6) << ' ' << row.name << '\n';
    ++printed;
  }
  return CheckWritten(out);
}

}  // namespace memprof::report::render
