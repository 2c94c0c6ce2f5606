#include "cli/report/report_pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <thread>
#include <utility>

#include "cli/report/analysis/aggregate.h"
#include "cli/report/analysis/base_profile.h"
#include "cli/report/analysis/collapsed_report.h"
#include "cli/report/analysis/heap_v2_parser.h"
#include "cli/report/analysis/json_report.h"
#include "cli/report/analysis/report_renderer.h"
#include "cli/report/analysis/svg_report.h"
#include "cli/report/analysis/text_report.h"
#include "cli/report/analysis/unsample.h"
#include "cli/report/pprof/parallel_symbolizer.h"
#include "cli/report/pprof/pprof_writer.h"
#include "cli/report/symbolize/memory_map.h"
#include "cli/report/symbolization_report.h"
#include "cli/report/symbolize/symbolizer.h"

namespace memprof::report {
namespace {

Result<analysis::HeapProfile> LoadProfile(const std::string& path) {
  auto dump = analysis::ParseHeapV2File(path);
  if (!dump) return Fail(dump.error());
  return analysis::Unsample(std::move(*dump));
}

// At most this many threads: a report has two big inputs to read and a
// few big files to symbolize, so more would mostly wait.
constexpr unsigned kMaxThreads = 4;

unsigned ThreadCount() { return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads); }

// The dump, minus --base when given. The two dumps are read side by side.
Result<analysis::HeapProfile> LoadRequestedProfile(const ReportRequest& request) {
  if (request.base_path.empty()) return LoadProfile(request.dump_path);
  Result<analysis::HeapProfile> base = Fail(ErrorCode::kInternal, "base not read");
  Result<analysis::HeapProfile> profile = Fail(ErrorCode::kInternal, "dump not read");
  {
    std::jthread base_reader([&] { base = LoadProfile(request.base_path); });
    profile = LoadProfile(request.dump_path);
  }
  if (!profile) return profile;
  if (!base) return Fail(base.error());
  return analysis::SubtractBase(*profile, *base);
}

symbolize::SymbolizerOptions SymbolizerOptionsFor(const ReportRequest& request) {
  symbolize::SymbolizerOptions options;
  options.lines = request.lines;
  options.nearest_symbol = request.nearest_symbol;
  options.pid = request.pid;
  options.sysroot = request.sysroot;
  if (request.pid && options.sysroot.empty()) {
    options.sysroot = "/proc/" + std::to_string(*request.pid) + "/root";
  }
  return options;
}

std::string FileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// With --base the renderer draws a differential flame graph and adds what
// its colours mean; the title names both dumps.
analysis::SvgOptions SvgOptionsFor(const ReportRequest& request) {
  analysis::SvgOptions options;
  options.title = "memprof: " + FileName(request.dump_path);
  if (!request.base_path.empty()) options.title += " vs base " + FileName(request.base_path);
  return options;
}

std::unique_ptr<analysis::ReportRenderer> MakeRenderer(
    const ReportRequest& request, const analysis::SymbolizationSummary& symbolization) {
  analysis::ReportOptions options;
  options.show_bytes = request.show_bytes;
  options.sort_by_cum = request.sort_by_cum;
  options.top = request.top;
  options.symbolization = &symbolization;
  switch (request.format) {
    case Format::kCollapsed: return std::make_unique<analysis::CollapsedReportRenderer>();
    case Format::kJson: return std::make_unique<analysis::JsonReportRenderer>(options);
    case Format::kSvg: return std::make_unique<analysis::SvgReportRenderer>(SvgOptionsFor(request));
    case Format::kText:
    case Format::kPprof: break;
  }
  return std::make_unique<analysis::TextReportRenderer>(options);
}

SummaryContext SummaryContextFor(const ReportRequest& request) {
  SummaryContext context;
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  context.debuginfod = urls != nullptr && urls[0] != '\0';
  context.sysroot = request.sysroot;
  return context;
}

Result<void> RenderAggregated(const ReportRequest& request, const analysis::HeapProfile& profile,
                              pprof::ParallelSymbolizer& symbolizer, std::ostream& out,
                              analysis::SymbolizationSummary* symbolization) {
  analysis::AggregateOptions options{request.metric, request.focus, request.ignore};
  auto aggregation = analysis::AggregateProfile(profile, symbolizer, options);
  if (!aggregation) return Fail(aggregation.error());
  const analysis::SymbolizationSummary summary =
      SummarizeSymbolization(*aggregation, [&] { return symbolizer.Modules(); },
                             SummaryContextFor(request));
  if (symbolization != nullptr) *symbolization = summary;
  return MakeRenderer(request, summary)->Render(*aggregation, out);
}

}  // namespace

const std::vector<std::string>& FormatNames() {
  static const std::vector<std::string> names = {"text", "collapsed", "pprof", "svg", "json"};
  return names;
}

std::optional<Format> ParseFormat(std::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "collapsed") return Format::kCollapsed;
  if (name == "pprof") return Format::kPprof;
  if (name == "svg") return Format::kSvg;
  if (name == "json") return Format::kJson;
  return std::nullopt;
}

std::string_view FormatExtension(Format format) {
  switch (format) {
    case Format::kText: return "txt";
    case Format::kCollapsed: return "collapsed";
    case Format::kPprof: return "pb.gz";
    case Format::kSvg: return "svg";
    case Format::kJson: return "json";
  }
  return "txt";
}

Result<void> RunReportPipeline(const ReportRequest& request, std::ostream& out,
                               analysis::SymbolizationSummary* symbolization) {
  auto profile = LoadRequestedProfile(request);
  if (!profile) return Fail(profile.error());
  auto map = symbolize::ParseMemoryMap(profile->mapped_libraries);
  const symbolize::SymbolizerOptions options = SymbolizerOptionsFor(request);
  auto symbolizer = symbolize::Symbolizer::Create(map.mappings, options);
  if (!symbolizer) return Fail(symbolizer.error());
  const std::vector<uint64_t> addresses = pprof::DistinctLookupAddresses(*profile);
  pprof::ParallelSymbolizer adapter(std::move(*symbolizer), map.mappings, options, addresses,
                                    ThreadCount());
  if (request.format != Format::kPprof) {
    return RenderAggregated(request, *profile, adapter, out, symbolization);
  }
  pprof::PprofOptions pprof_options;
  pprof_options.sysroot = options.sysroot;
  return pprof::WritePprof(*profile, adapter, map.mappings, pprof_options, out);
}

}  // namespace memprof::report
