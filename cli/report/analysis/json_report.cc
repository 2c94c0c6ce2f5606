#include "cli/report/analysis/json_report.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_schema_versions.h"

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

// Names come from binaries and may hold invalid UTF-8: replaced, not thrown.
std::string Compact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The library's spelling of a string, without building a document for the
// plain ones (printable ASCII, nothing to escape), which are nearly all.
void AppendString(std::string& out, std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (!plain) {
    out += Compact(Json(text));
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

template <typename Integer>
void AppendInteger(std::string& out, Integer value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end);
}

// One entry of "locations", as the library would write it compactly: the
// address and the frames it stands for, innermost (inlined) first.
void AppendLocation(std::string& out, const Location& location) {
  out += "{\"address\":";
  AppendString(out, HexAddress(location.address));
  out += ",\"frames\":[";
  for (size_t i = 0; i < location.frames.size(); ++i) {
    const Frame& frame = location.frames[i];
    if (i > 0) out += ',';
    out += "{\"function\":";
    AppendString(out, frame.function.empty() ? UnnamedFrameName(frame, location.address)
                                             : frame.function);
    out += ",\"file\":";
    AppendString(out, frame.file);
    out += ",\"line\":";
    AppendInteger(out, frame.line);
    out += ",\"module\":";
    AppendString(out, frame.module);
    out += ",\"module_offset\":";
    AppendInteger(out, frame.module_offset);
    out += i + 1 < location.frames.size() ? ",\"inlined\":true}" : ",\"inlined\":false}";
  }
  out += "]}";
}

void AppendStack(std::string& out, const StackSample& stack, bool is_diff) {
  out += "{\"value\":";
  out += Json(stack.value).dump();
  if (is_diff) {
    out += ",\"now\":";
    out += Json(stack.value + stack.base).dump();
    out += ",\"base\":";
    out += Json(stack.base).dump();
  }
  out += ",\"locations\":[";
  for (size_t i = 0; i < stack.locations.size(); ++i) {
    if (i > 0) out += ',';
    AppendInteger(out, stack.locations[i]);
  }
  out += "]}";
}

// Writes `"name": [` one compact line per item `]`, flushing every megabyte.
template <typename Items, typename AppendItem>
void WriteArray(std::string_view name, const Items& items, const AppendItem& append_item,
                std::ostream& out) {
  std::string text = "  \"" + std::string(name) + "\": [";
  text.reserve(kFlushBytes + (64 << 10));
  bool first = true;
  for (const auto& item : items) {
    text += first ? "\n    " : ",\n    ";
    first = false;
    append_item(text, item);
    if (text.size() >= kFlushBytes) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text.clear();
    }
  }
  text += first ? "]" : "\n  ]";
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

// Stacks share their locations (a big profile has tens of thousands of
// stacks of dozens of frames over far fewer distinct addresses), so each
// location is written once in "locations" and stacks list their indexes,
// leaf first. Both arrays have one compact line per entry and are streamed;
// the small rest is dumped by the library.
Result<void> JsonReportRenderer::Render(const Aggregation& aggregation, std::ostream& out) const {
  Json report;
  report["schema_version"] = kReportJsonVersion;
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
  std::string head = report.dump(2, ' ', false, Json::error_handler_t::replace);
  head.resize(head.size() - 2);  // dump() ends with "\n}"
  head += ",\n";
  out.write(head.data(), static_cast<std::streamsize>(head.size()));
  WriteArray("locations", aggregation.locations, AppendLocation, out);
  out << ",\n";
  WriteArray(
      "stacks", aggregation.stacks,
      [&](std::string& text, const StackSample& stack) {
        AppendStack(text, stack, aggregation.is_diff);
      },
      out);
  out << "\n}\n";
  return CheckWritten(out);
}

}  // namespace memprof::analysis
