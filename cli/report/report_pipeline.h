#ifndef MEMPROF_CLI_REPORT_REPORT_PIPELINE_H_
#define MEMPROF_CLI_REPORT_REPORT_PIPELINE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/report/aggregate/symbolization_summary.h"
#include "cli/report/model/profile.h"
#include "cli/report/pprof/parallel_symbolizer.h"
#include "cli/report/symbolize/memory_map.h"
#include "cli/report/symbolize/symbolizer_options.h"
#include "common/result.h"

namespace memprof::report {

// The output formats of `memprofctl report` (and `dump --format`).
enum class Format { kText, kCollapsed, kPprof, kSvg, kJson };

// "text", "collapsed", "pprof", "svg", "json".
const std::vector<std::string>& FormatNames();
std::optional<Format> ParseFormat(std::string_view name);
// The file extension for --out-dir style names: "txt", "collapsed", "pb.gz", "svg", "json".
std::string_view FormatExtension(Format format);

// Everything one report needs; the defaults are jeprof's.
struct ReportRequest {
  std::string dump_path;
  std::string base_path;  // --base: subtract this earlier dump ("" = none)
  // More dumps to add to dump_path (merge: a series, or many processes),
  // and more base dumps to add to base_path before subtracting. Each dump
  // is unsampled and placed in one address space (merge/address_space.h).
  std::vector<std::string> more_dump_paths;
  std::vector<std::string> more_base_paths;
  Format format = Format::kText;
  analysis::Metric metric = analysis::Metric::kInuseSpace;
  // Whether `metric` was asked for (a flag): an allocation profile's
  // default is kAllocSpace, a heap dump's kInuseSpace.
  bool metric_chosen = false;
  std::string focus;   // regex; "" = unset
  std::string ignore;  // regex; "" = unset
  std::optional<size_t> top;
  bool show_bytes = false;
  bool sort_by_cum = false;
  bool lines = false;  // file:line (and inline frames) in the names
  // Name addresses no symbol covers after the closest symbol below, as a
  // guess ("name+0x2a?"), like jeprof; default: module+0xOFFSET.
  bool nearest_symbol = false;
  // The live process the dump came from: its binaries are read through
  // /proc/<pid>/map_files and /proc/<pid>/root (containers, replaced files).
  std::optional<pid_t> pid;
  // Root under which the dump's paths are looked up ("" = this host's /).
  std::string sysroot;
  // --trend: rank call sites by steady growth over the dumps (text or json;
  // trend_pipeline.h) instead of reporting their sum.
  bool trend = false;
  // --lifetimes: per allocation site, what was allocated, freed and
  // survived and how long the freed objects lived (allocation profiles
  // only; text or json; allocation_report.h).
  bool lifetimes = false;
  // The process ends after this report (`memprofctl report`): the dump,
  // symbols and tables are left for the kernel to take back at exit
  // (leave_to_exit.h) instead of being freed. Not for a caller that goes
  // on, such as `profile --interval`.
  bool process_ends_after = false;
  // Say in the summary's files_read how each binary was opened (-v).
  bool describe_files = false;
};

// The symbolizer settings a request implies (--lines, --pid, --sysroot).
symbolize::SymbolizerOptions SymbolizerOptionsFor(const ReportRequest& request);

// The report's symbolizer over `mappings`, with the request's settings,
// its ReportThreadCount() threads started (ParallelSymbolizer): the caller
// calls ResolveAll.
[[nodiscard]] Result<std::unique_ptr<pprof::ParallelSymbolizer>> StartReportSymbolizer(
    const ReportRequest& request, const std::vector<symbolize::MemoryMapping>& mappings);

// The same with every one of `addresses` named up front.
[[nodiscard]] Result<std::unique_ptr<pprof::ParallelSymbolizer>> MakeReportSymbolizer(
    const ReportRequest& request, const std::vector<symbolize::MemoryMapping>& mappings,
    std::span<const uint64_t> addresses);

// dump(s) -> unsample (-> sum -> minus base(s)) -> symbolize -> the format.
// One dump without a base takes exactly the single-dump path (no merge step).
// With `trend`, RunTrendPipeline instead. An allocation profile (told by its
// first line) is read alone: parse -> unsample per record -> symbolize ->
// the format, ranked by bytes allocated unless a metric was chosen, or the
// --lifetimes table (allocation_report.h).
// When `symbolization` is given it receives what could not be named and how
// to fix it (for stderr: analysis::FormatSymbolizationSummary); --format json
// carries the same in its "symbolization" object.
// Errors: kInvalidArgument for a malformed dump ("file:line: what") or a bad
// regex, kNotFound for a missing file, kInternal when writing fails.
[[nodiscard]] Result<void> RunReportPipeline(
    const ReportRequest& request, std::ostream& out,
    analysis::SymbolizationSummary* symbolization = nullptr);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_REPORT_PIPELINE_H_
