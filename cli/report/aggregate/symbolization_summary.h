#ifndef MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_SUMMARY_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_SUMMARY_H_

#include <map>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"

namespace memprof::analysis {

// One mapped file whose frames the report could not all name.
struct ModuleCoverage {
  std::string path;        // as the dump's map names it
  std::string build_id;    // hex; "" when unknown
  std::string problem;     // the file could not be used at all ("" = it was)
  bool full_symtab = false;  // had a .symtab, not only exported symbols
  bool debug_info = false;   // DWARF was found
  std::string package;        // the Debian package that ships `path` ("" = none)
  std::string debug_package;  // where its symbols are: "<package>-dbgsym"
  // Of the profile's bytes (or objects), the share in stacks with at least
  // one frame of this file that has no name (or only a guessed one).
  double share = 0;
  size_t unnamed_frames = 0;  // distinct code addresses without a name
};

// What the report could name, what it could not, and how to fix it: printed
// after the report on stderr, and the "symbolization" object of --format json.
struct SymbolizationSummary {
  double named_share = 1;  // share of the profile in stacks with every frame named
  std::vector<ModuleCoverage> modules;  // files with unnamed frames, largest share first
  bool debuginfod = false;              // DEBUGINFOD_URLS was set
  bool sysroot = false;                 // --sysroot (or a live target's root) was used
  // Nothing to show: no function with a value (an empty profile, filters
  // that left nothing, or a --base difference of zero).
  bool empty = false;
  bool is_diff = false;
  // With ReportRequest::describe_files (-v): how each binary was read, one
  // line each ("/usr/lib/x86_64-linux-gnu/libc.so.6: read through
  // /proc/12/map_files/..."); not part of the JSON.
  std::vector<std::string> files_read;
  bool complete() const { return modules.empty(); }
};

// Per module name (Frame::module): the share of the profile in stacks with
// an unnamed frame of it, and how many distinct unnamed addresses it has.
// Shares are of the stacks' absolute values, so a --base difference counts
// growth and shrinkage alike.
struct UnnamedFrames {
  double share = 0;
  size_t addresses = 0;
};
struct UnnamedFrameShares {
  double named_share = 1;
  std::map<std::string, UnnamedFrames> by_module;
};
UnnamedFrameShares CountUnnamedFrames(const Aggregation& aggregation);

// The stderr text: nothing when every frame has a name; otherwise a few
// lines per file (path, build ID, share, what is missing) and the fix.
std::string FormatSymbolizationSummary(const SymbolizationSummary& summary);

}  // namespace memprof::analysis

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_SUMMARY_H_
