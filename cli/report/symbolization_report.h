#ifndef MEMPROF_CLI_REPORT_SYMBOLIZATION_REPORT_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZATION_REPORT_H_

#include <functional>
#include <future>
#include <map>
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

// Starts looking up the Debian packages of `modules` on another thread. A
// big report reads a thousand dpkg file lists (a tenth of its time) while
// its main thread aggregates, so the summary that needs them last finds
// them ready.
std::shared_future<PackageOwners> PrefetchPackageOwners(
    const std::vector<symbolize::ModuleReport>& modules,
    const std::string& dpkg_info_dir = "/var/lib/dpkg/info");

// The summary of what `aggregation` could not name, with what the
// symbolizer found for each file (`modules`, asked only when some frame has
// no name) and, for files of this host, the Debian package whose -dbgsym
// has their symbols.
analysis::SymbolizationSummary SummarizeSymbolization(
    const analysis::Aggregation& aggregation,
    const std::function<std::vector<symbolize::ModuleReport>()>& modules,
    const SummaryContext& context);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZATION_REPORT_H_
