#ifndef MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_SUMMARY_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_SUMMARY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"

namespace memprof::report::aggregate {

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
  // The share in which such a frame hides something (UnnamedFrameShares).
  double hidden_share = 0;
  size_t unnamed_frames = 0;  // distinct code addresses without a name
};

// What the report could name, what it could not, and how to fix it: printed
// after the report on stderr, and the "symbolization" object of --format json.
struct SymbolizationSummary {
  double named_share = 1;  // share of the profile in stacks with every frame named
  // What the missing names hide (UnnamedFrameShares): the share allocated
  // at an unnamed site, the share with an unnamed call between named ones,
  // and the share with either.
  double unnamed_site_share = 0;
  double cut_short_share = 0;
  double hidden_share = 0;
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
  // Set when memprof's sampler wrote the dump: the profile holds only what
  // was allocated since then (HeapProfile::sampler).
  std::optional<SamplerCoverage> sampler;
  bool complete() const { return modules.empty(); }
};

// The share of the profile at which the missing names are worth a fix: at
// or above it, the summary lists the files and how to name them; below it,
// one line (docs/user-guide.md, "Symbolization").
inline constexpr double kHiddenShareHint = 0.05;

// What a stack's unnamed frames hide. A stack is read from its allocating
// site (the first location above the allocator, which the aggregation has
// cut) outwards; a location is unnamed when any of its frames is. Such a
// location hides something when it is the site itself, or when a named
// location lies further out (the named part of the stack is cut short).
// libc's process and thread entry points (_start, __libc_start_main,
// start_thread, clone3, ...) never count as that named location: locations
// beyond the outermost other named one (libstdc++'s thread trampoline
// between a std::thread's function and start_thread) hide nothing and count
// for nothing but `share`.
//
// Per module name (Frame::module): the share of the profile in stacks with
// an unnamed frame of it, the share in which one of them hides something,
// and how many distinct unnamed addresses it has. Shares are of the stacks'
// absolute values, so a --base difference counts growth and shrinkage alike.
struct UnnamedFrames {
  double share = 0;
  double hidden_share = 0;
  size_t addresses = 0;
};
struct UnnamedFrameShares {
  double named_share = 1;
  double unnamed_site_share = 0;  // the site is unnamed
  double cut_short_share = 0;     // an unnamed location between the site and a named one
  double hidden_share = 0;        // either
  std::map<std::string, UnnamedFrames> by_module;
};
UnnamedFrameShares CountUnnamedFrames(const Aggregation& aggregation);

// The stderr text. Nothing when no unnamed frame hides anything; one line
// when what they hide is under kHiddenShareHint; otherwise the files whose
// frames hide something (path, build ID, shares, what is missing) and the
// fix. `verbose` (-v): every file with an unnamed frame, whatever it
// hides, and the fix.
std::string FormatSymbolizationSummary(const SymbolizationSummary& summary, bool verbose = false);

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_SYMBOLIZATION_SUMMARY_H_
