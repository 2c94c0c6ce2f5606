#ifndef MEMPROF_CLI_REPORT_SYMBOLIZATION_REPORT_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZATION_REPORT_H_

#include <functional>
#include <future>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/symbolization_summary.h"
#include "cli/report/symbolize/module_report.h"

namespace memprof::report {

// Which Debian package owns each file (PackagesOwning's answer).
using PackageOwners = std::map<std::string, std::string>;

struct SummaryContext {
  bool debuginfod = false;  // DEBUGINFOD_URLS is set
  std::string sysroot;      // the dump's files were read under this root ("" = this host)
  std::string dpkg_info_dir = "/var/lib/dpkg/info";
  // When valid: the owners of every file the symbolizer opened, looked up
  // ahead (PrefetchPackageOwners); else the summary reads dpkg's lists itself.
  std::shared_future<PackageOwners> owners;
};

// Starts looking up the Debian packages of `modules` on another thread,
// while the main thread aggregates, so that the summary that needs them
// last finds them ready. The answer has an entry for each of them ("" when
// no package owns it); the summary looks up any other file itself.
std::shared_future<PackageOwners> PrefetchPackageOwners(
    const std::vector<report::symbolize::ModuleReport>& modules,
    const std::string& dpkg_info_dir = "/var/lib/dpkg/info");

// The files of `modules` in which some of `addresses` (resolved by
// `symbolizer`) has a frame without a name: the only files a summary can
// name a package for, so the only ones worth reading dpkg's lists for.
std::vector<report::symbolize::ModuleReport> ModulesWithUnnamedFrames(
    const std::vector<report::symbolize::ModuleReport>& modules,
    std::span<const uint64_t> addresses, report::aggregate::AddressSymbolizer& symbolizer);

// The summary of what `aggregation` could not name, with what the
// symbolizer found for each file (`modules`, asked only when some frame has
// no name) and, for files of this host, the Debian package whose -dbgsym
// has their symbols.
report::aggregate::SymbolizationSummary SummarizeSymbolization(
    const report::aggregate::Aggregation& aggregation,
    const std::function<std::vector<report::symbolize::ModuleReport>()>& modules,
    const SummaryContext& context);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZATION_REPORT_H_
