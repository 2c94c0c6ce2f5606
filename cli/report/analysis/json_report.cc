#include "cli/report/analysis/json_report.h"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
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

// A diff's row: flat and cum are the changes; both dumps' values too.
void AddBothSides(Json& function, const FunctionRow& row) {
  function["flat_now"] = row.flat + row.flat_base;
  function["flat_base"] = row.flat_base;
  function["cum_now"] = row.cum + row.cum_base;
  function["cum_base"] = row.cum_base;
}

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
    if (aggregation.is_diff) AddBothSides(functions.back(), row);
  }
  return functions;
}

Json ModuleJson(const ModuleCoverage& module) {
  return {{"path", module.path},
          {"build_id", module.build_id},
          {"share", module.share},
          {"unnamed_frames", module.unnamed_frames},
          {"symbols", !module.problem.empty() ? "none"
                      : module.full_symtab    ? "full"
                                              : "exported"},
          {"debug_info", module.debug_info},
          {"package", module.package},
          {"debug_package", module.debug_package},
          {"problem", module.problem}};
}

// The facts FormatSymbolizationSummary prints, for scripts.
Json SymbolizationJson(const SymbolizationSummary& summary) {
  Json modules = Json::array();
  std::set<std::string> packages;
  for (const ModuleCoverage& module : summary.modules) {
    modules.push_back(ModuleJson(module));
    if (!module.debug_package.empty()) packages.insert(module.debug_package);
  }
  return {{"complete", summary.complete()},
          {"named_share", summary.named_share},
          {"debuginfod", summary.debuginfod},
          {"sysroot", summary.sysroot},
          {"debug_packages", packages},
          {"modules", modules}};
}

constexpr size_t kFlushBytes = 1 << 20;
// Where a frame object sits in the document: report > "stacks" > stack >
// "frames" > frame, two spaces per level.
constexpr size_t kFrameIndent = 8;

// What nlohmann's dump(2) writes for `value` nested `extra` spaces deeper
// than the top level. Names come from binaries and may hold invalid UTF-8:
// replaced, not thrown.
std::string Dumped(const Json& value, size_t extra) {
  std::string text = value.dump(2, ' ', false, Json::error_handler_t::replace);
  std::string indented(extra, ' ');
  indented.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    indented += c;
    if (c == '\n') indented.append(extra, ' ');
  }
  return indented;
}

// The frame objects of one location, as they appear inside any stack's
// "frames" array (joined by ",\n"). A location recurs in thousands of
// stacks, so its text is built once.
std::string LocationFramesText(const Location& location) {
  std::string text;
  for (size_t i = 0; i < location.frames.size(); ++i) {
    const Frame& frame = location.frames[i];
    Json object = {
        {"address", HexAddress(location.address)},
        {"function",
         frame.function.empty() ? UnnamedFrameName(frame, location.address) : frame.function},
        {"file", frame.file},
        {"line", frame.line},
        {"module", frame.module},
        {"module_offset", frame.module_offset},
        {"inlined", i + 1 < location.frames.size()}};
    if (i > 0) text += ",\n";
    text += Dumped(object, kFrameIndent);
  }
  return text;
}

// Writes the "stacks" array exactly as dump(2) would, from each location's
// prepared text, flushing to `out` every megabyte.
void WriteStacks(const Aggregation& aggregation, std::ostream& out) {
  std::vector<std::string> locations;
  locations.reserve(aggregation.locations.size());
  for (const Location& location : aggregation.locations) {
    locations.push_back(LocationFramesText(location));
  }
  std::string text = "[";
  for (size_t s = 0; s < aggregation.stacks.size(); ++s) {
    const StackSample& stack = aggregation.stacks[s];
    text += s == 0 ? "\n    {\n      \"value\": " : ",\n    {\n      \"value\": ";
    text += Json(stack.value).dump();
    if (aggregation.is_diff) {
      text += ",\n      \"now\": " + Json(stack.value + stack.base).dump();
      text += ",\n      \"base\": " + Json(stack.base).dump();
    }
    text += ",\n      \"frames\": [";
    for (size_t i = 0; i < stack.locations.size(); ++i) {
      text += i == 0 ? "\n" : ",\n";
      text += locations[stack.locations[i]];
    }
    text += stack.locations.empty() ? "]\n    }" : "\n      ]\n    }";
    if (text.size() >= kFlushBytes) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text.clear();
    }
  }
  text += aggregation.stacks.empty() ? "]" : "\n  ]";
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

// The stacks are most of the document (hundreds of megabytes for a big
// profile) and repeat the same locations over and over, so they are written
// from per-location text rather than built as one JSON tree; the rest is
// small and dumped by the library, with "stacks" spliced in where its empty
// placeholder would be.
Result<void> JsonReportRenderer::Render(const Aggregation& aggregation, std::ostream& out) const {
  Json report;
  report["metric"] = MetricName(aggregation.metric);
  report["unit"] = IsObjectMetric(aggregation.metric) ? "objects" : "bytes";
  report["total"] = aggregation.total;
  report["shown_total"] = aggregation.shown_total;
  if (aggregation.is_diff) {
    // --base: every value above and below is a change (signed).
    report["diff"] = true;
    report["total_now"] = aggregation.total + aggregation.total_base;
    report["total_base"] = aggregation.total_base;
  }
  report["functions"] = FunctionsJson(aggregation, options_);
  if (options_.symbolization != nullptr) {
    report["symbolization"] = SymbolizationJson(*options_.symbolization);
  }
  report["stacks"] = Json::array();
  std::string head = report.dump(2, ' ', false, Json::error_handler_t::replace);
  constexpr std::string_view kPlaceholder = "[]\n}";
  head.resize(head.size() - kPlaceholder.size());  // dump() ends with the placeholder
  out.write(head.data(), static_cast<std::streamsize>(head.size()));
  WriteStacks(aggregation, out);
  out << "\n}\n";
  return CheckWritten(out);
}

}  // namespace memprof::analysis
