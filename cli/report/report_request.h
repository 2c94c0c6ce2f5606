#ifndef MEMPROF_CLI_REPORT_REPORT_REQUEST_H_
#define MEMPROF_CLI_REPORT_REPORT_REQUEST_H_

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/report/model/profile.h"

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
  Metric metric = Metric::kInuseSpace;
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
  // Keep plain copies of compressed debug files and the sorted indexes of
  // big symbol tables in the user's cache (symbolize/debug_file_cache.h,
  // symbolize/symbol_index_cache.h); --no-cache reads every file afresh.
  bool use_caches = true;
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

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_REPORT_REQUEST_H_
