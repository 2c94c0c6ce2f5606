#include "cli/report/analysis/json_report.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace memprof::analysis {
namespace {

using Json = nlohmann::ordered_json;

const char* MetricName(Metric metric) {
  switch (metric) {
    case Metric::kInuseSpace:
      return "inuse_space";
    case Metric::kInuseObjects:
      return "inuse_objects";
    case Metric::kAllocSpace:
      return "alloc_space";
    case Metric::kAllocObjects:
      return "alloc_objects";
  }
  return "unknown";
}

double Percent(double value, double total) { return total != 0 ? value * 100.0 / total : 0; }

Json FunctionsJson(const Aggregation& aggregation, const ReportOptions& options) {
  std::vector<FunctionRow> rows = aggregation.functions;
  if (options.sort_by_cum) SortFunctionRows(rows, true);
  Json functions = Json::array();
  for (const FunctionRow& row : rows) {
    if (options.top && functions.size() >= *options.top) break;
    functions.push_back({{"name", row.name},
                         {"flat", row.flat},
                         {"flat_percent", Percent(row.flat, aggregation.shown_total)},
                         {"cum", row.cum},
                         {"cum_percent", Percent(row.cum, aggregation.shown_total)}});
  }
  return functions;
}

void AppendFrames(const Location& location, Json& frames) {
  for (size_t i = 0; i < location.frames.size(); ++i) {
    const Frame& frame = location.frames[i];
    frames.push_back(
        {{"address", HexAddress(location.address)},
         {"function", frame.function.empty() ? HexAddress(location.address) : frame.function},
         {"file", frame.file},
         {"line", frame.line},
         {"module", frame.module},
         {"module_offset", frame.module_offset},
         {"inlined", i + 1 < location.frames.size()}});
  }
}

Json StacksJson(const Aggregation& aggregation) {
  Json stacks = Json::array();
  for (const StackSample& stack : aggregation.stacks) {
    Json frames = Json::array();
    for (uint32_t location : stack.locations) {
      AppendFrames(aggregation.locations[location], frames);
    }
    stacks.push_back({{"value", stack.value}, {"frames", std::move(frames)}});
  }
  return stacks;
}

}  // namespace

Result<void> JsonReportRenderer::Render(const Aggregation& aggregation, std::ostream& out) const {
  Json report;
  report["metric"] = MetricName(aggregation.metric);
  report["unit"] = IsObjectMetric(aggregation.metric) ? "objects" : "bytes";
  report["total"] = aggregation.total;
  report["shown_total"] = aggregation.shown_total;
  report["functions"] = FunctionsJson(aggregation, options_);
  report["stacks"] = StacksJson(aggregation);
  // Names come from binaries and may hold invalid UTF-8: replace, don't throw.
  out << report.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  return CheckWritten(out);
}

}  // namespace memprof::analysis
