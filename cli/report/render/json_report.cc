#include "cli/report/render/json_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli/report/render/allocation_header.h"
#include "common/json_schema_versions.h"

namespace memprof::report::render {
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

Json ModuleJson(const aggregate::ModuleCoverage& module) {
  return {{"path", module.path},
          {"build_id", module.build_id},
          {"share", module.share},
          {"hidden_share", module.hidden_share},
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
Json SymbolizationJson(const aggregate::SymbolizationSummary& summary) {
  Json modules = Json::array();
  std::set<std::string> packages;
  for (const aggregate::ModuleCoverage& module : summary.modules) {
    modules.push_back(ModuleJson(module));
    if (!module.debug_package.empty()) packages.insert(module.debug_package);
  }
  return {{"complete", summary.complete()},
          {"named_share", summary.named_share},
          {"hidden_share", summary.hidden_share},
          {"unnamed_site_share", summary.unnamed_site_share},
          {"cut_short_share", summary.cut_short_share},
          {"hint_share", aggregate::kHiddenShareHint},
          {"debuginfod", summary.debuginfod},
          {"sysroot", summary.sysroot},
          {"debug_packages", packages},
          {"modules", modules}};
}

// Who sampled the profile and what it covers: the allocator's own profiler
// (everything it sampled since it started profiling) or memprof's sampler
// (what was allocated since it was switched on).
Json CoverageJson(const aggregate::SymbolizationSummary& summary) {
  const SamplerCoverage coverage = summary.sampler.value_or(SamplerCoverage{});
  return {{"sampled_by", summary.sampler ? "memprof" : "allocator"},
          {"since_unix_ms", coverage.since_unix_ms},
          {"dropped", coverage.dropped}};
}

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
void AppendLocation(std::string& out, const aggregate::Location& location) {
  out += "{\"address\":";
  AppendString(out, aggregate::HexAddress(location.address));
  out += ",\"frames\":[";
  for (size_t i = 0; i < location.frames.size(); ++i) {
    const aggregate::Frame& frame = location.frames[i];
    if (i > 0) out += ',';
    out += "{\"function\":";
    AppendString(out, frame.function.empty() ? aggregate::UnnamedFrameName(frame, location.address)
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

// A number as the library writes it.
// What Json(value).dump() writes, without making a document and a string
// for each of a report's hundred thousand numbers: the library's own
// shortest round-trip digits (its serializer calls the same function), and
// "null" for what JSON cannot hold.
void AppendNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char digits[64];
  const char* end = nlohmann::detail::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, static_cast<size_t>(end - digits));
}

// Every location index as the decimal text a stack lists it by, made once:
// a big profile's stacks list millions of indexes over a few thousand
// locations, and copying a ready text is several times faster than
// converting each again.
class IndexTexts {
 public:
  explicit IndexTexts(size_t count) : texts_(count) {
    for (size_t i = 0; i < count; ++i) {
      Text& text = texts_[i];
      text.size = static_cast<uint8_t>(
          std::to_chars(text.chars, text.chars + kDigits, static_cast<uint32_t>(i)).ptr -
          text.chars);
    }
  }

  // Writes `index`'s text at `to`, which has room for kDigits bytes (all of
  // them are written), and returns the end of the text.
  char* Put(char* to, uint32_t index) const {
    const Text& text = texts_[index];
    std::memcpy(to, text.chars, kDigits);
    return to + text.size;
  }

  static constexpr size_t kDigits = 10;  // the longest uint32_t

 private:
  struct Text {
    char chars[kDigits] = {};
    uint8_t size = 0;
  };
  std::vector<Text> texts_;
};

void AppendStack(std::string& out, const aggregate::StackSample& stack, bool is_diff,
                 const IndexTexts& indexes) {
  out += "{\"value\":";
  AppendNumber(out, stack.value);
  if (is_diff) {
    out += ",\"now\":";
    AppendNumber(out, stack.value + stack.base);
    out += ",\"base\":";
    AppendNumber(out, stack.base);
  }
  out += ",\"locations\":[";
  // Room for the longest: a comma and all of an index's text each. The
  // writing starts where the string ends now, not from the size handed to
  // the callback: GCC 12's library hands it the grown capacity instead.
  const size_t at = out.size();
  out.resize_and_overwrite(at + stack.locations.size() * (1 + IndexTexts::kDigits),
                           [&](char* data, size_t) {
                             char* next = data + at;
                             for (size_t i = 0; i < stack.locations.size(); ++i) {
                               if (i > 0) *next++ = ',';
                               next = indexes.Put(next, stack.locations[i]);
                             }
                             return static_cast<size_t>(next - data);
                           });
  out += "]}";
}

// One "key": value line of a function's object, as the library indents it.
void AppendMember(std::string& out, std::string_view key, double value, bool last = false) {
  out += "      \"";
  out += key;
  out += "\": ";
  AppendNumber(out, value);
  out += last ? "\n" : ",\n";
}

// The "functions" array, indented as the library would (the rest of the
// head is small and still dumped by it): thousands of rows are too many to
// build as a document first.
std::string FunctionsText(const aggregate::Aggregation& aggregation, const ReportOptions& options) {
  std::vector<aggregate::FunctionRow> sorted;
  if (options.sort_by_cum) {
    sorted = aggregation.functions;
    aggregate::SortFunctionRows(sorted, true, aggregation.is_diff);
  }
  const std::vector<aggregate::FunctionRow>& rows =
      options.sort_by_cum ? sorted : aggregation.functions;
  const size_t count = options.top ? std::min<size_t>(*options.top, rows.size()) : rows.size();
  if (count == 0) return "[]";
  std::string text = "[\n";
  for (size_t i = 0; i < count; ++i) {
    const aggregate::FunctionRow& row = rows[i];
    text += "    {\n      \"name\": ";
    AppendString(text, row.name);
    text += ",\n";
    AppendMember(text, "flat", row.flat);
    AppendMember(text, "flat_percent", Percent(row.flat, aggregation.shown_total));
    AppendMember(text, "cum", row.cum);
    const bool diff = aggregation.is_diff;
    AppendMember(text, "cum_percent", Percent(row.cum, aggregation.shown_total), !diff);
    if (diff) {
      // A diff's row: flat and cum are the changes; both dumps' values too.
      AppendMember(text, "flat_now", row.flat + row.flat_base);
      AppendMember(text, "flat_base", row.flat_base);
      AppendMember(text, "cum_now", row.cum + row.cum_base);
      AppendMember(text, "cum_base", row.cum_base, true);
    }
    text += i + 1 < count ? "    },\n" : "    }\n";
  }
  return text + "  ]";
}

// A one-member object's member as the library indents it in the report:
// `  "key": value` (the value's own lines indented alike).
std::string MemberText(const char* key, Json value) {
  Json holder;
  holder[key] = std::move(value);
  std::string text = holder.dump(2, ' ', false, Json::error_handler_t::replace);
  return text.substr(2, text.size() - 4);  // without "{\n" and "\n}"
}

// Writes `"name": [` one compact line per item `]`, flushing every megabyte;
// without `close`, leaves the array open after the last item (more follow).
template <typename Items, typename AppendItem>
void WriteArray(std::string_view name, const Items& items, const AppendItem& append_item,
                std::ostream& out, bool close = true) {
  std::string text = "  \"" + std::string(name) + "\": [";
  text.reserve(kReportFlushBytes + (64 << 10));
  bool first = true;
  for (const auto& item : items) {
    text += first ? "\n    " : ",\n    ";
    first = false;
    append_item(text, item);
    if (text.size() >= kReportFlushBytes) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text.clear();
    }
  }
  if (close) text += first ? "]" : "\n  ]";
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// Fewer are written at once.
constexpr size_t kStacksForTwoThreads = 4096;

// The items of "stacks" from `from` on, each after ",\n    ", in pieces of
// about kReportFlushBytes.
std::vector<std::string> FormatStacksFrom(const aggregate::Aggregation& aggregation, size_t from,
                                          const IndexTexts& indexes) {
  std::vector<std::string> pieces(1);
  for (size_t i = from; i < aggregation.stacks.size(); ++i) {
    if (pieces.back().size() >= kReportFlushBytes) pieces.emplace_back();
    pieces.back() += ",\n    ";
    AppendStack(pieces.back(), aggregation.stacks[i], aggregation.is_diff, indexes);
  }
  return pieces;
}

// A big profile's stacks are most of the report: the second half is
// formatted on another core while this thread formats and writes the first.
void WriteStacks(const aggregate::Aggregation& aggregation, std::ostream& out) {
  const IndexTexts indexes(aggregation.locations.size());
  auto append = [&](std::string& text, const aggregate::StackSample& stack) {
    AppendStack(text, stack, aggregation.is_diff, indexes);
  };
  const std::span<const aggregate::StackSample> stacks(aggregation.stacks);
  if (stacks.size() < kStacksForTwoThreads || std::thread::hardware_concurrency() < 2) {
    return WriteArray("stacks", stacks, append, out, true);
  }
  const size_t half = stacks.size() / 2;
  std::vector<std::string> second;
  {
    std::jthread helper([&] { second = FormatStacksFrom(aggregation, half, indexes); });
    WriteArray("stacks", stacks.first(half), append, out, false);
  }
  for (const std::string& piece : second)
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  out << "\n  ]";
}

}  // namespace

// Stacks share their locations (a big profile has tens of thousands of
// stacks of dozens of frames over far fewer distinct addresses), so each
// location is written once in "locations" and stacks list their indexes,
// leaf first. Both arrays have one compact line per entry and are streamed;
// the small rest is dumped by the library.
Result<void> JsonReportRenderer::Render(const aggregate::Aggregation& aggregation,
                                        std::ostream& out) const {
  Json report;
  report["schema_version"] = kReportJsonVersion;
  report["metric"] = MetricName(aggregation.metric);
  report["unit"] = IsObjectMetric(aggregation.metric) ? "objects" : "bytes";
  report["total"] = aggregation.total;
  report["shown_total"] = aggregation.shown_total;
  if (options_.allocation != nullptr) {
    report["allocation_profile"] = AllocationHeaderJson(*options_.allocation);
  }
  if (aggregation.is_diff) {
    // --base: every value above and below is a change (signed).
    report["diff"] = true;
    report["total_now"] = aggregation.total + aggregation.total_base;
    report["total_base"] = aggregation.total_base;
  }
  std::string head = report.dump(2, ' ', false, Json::error_handler_t::replace);
  head.resize(head.size() - 2);  // dump() ends with "\n}"
  head += ",\n  \"functions\": " + FunctionsText(aggregation, options_) + ",\n";
  if (options_.symbolization != nullptr) {
    head += MemberText("symbolization", SymbolizationJson(*options_.symbolization)) + ",\n";
    head += MemberText("coverage", CoverageJson(*options_.symbolization)) + ",\n";
  }
  out.write(head.data(), static_cast<std::streamsize>(head.size()));
  WriteArray("locations", aggregation.locations, AppendLocation, out);
  out << ",\n";
  WriteStacks(aggregation, out);
  out << "\n}\n";
  return CheckWritten(out);
}

}  // namespace memprof::report::render
