#ifndef MEMPROF_CLI_REPORT_ALLOCATION_REPORT_H_
#define MEMPROF_CLI_REPORT_ALLOCATION_REPORT_H_

#include <ostream>
#include <string>

#include "cli/report/aggregate/allocation_samples.h"
#include "cli/report/model/allocation_profile.h"
#include "cli/report/pprof/parallel_symbolizer.h"
#include "cli/report/pprof/pprof_writer.h"
#include "cli/report/report_request.h"
#include "common/result.h"

namespace memprof::report {

// An allocation profile read for a report: the records (for --lifetimes)
// and the heap model every other format reads.
struct LoadedAllocationProfile {
  report::AllocationProfile input;  // its maps moved into samples.profile
  report::aggregate::AllocationSamples samples;
};

// What a request on an allocation profile may not ask: more profiles or a
// base (a window's records are not a heap to add or subtract), --trend.
// kInvalidArgument (exit 2) saying why.
[[nodiscard]] Result<void> CheckAllocationRequest(const ReportRequest& request);

// --lifetimes on a heap dump: kInvalidArgument (exit 2) saying what it needs.
[[nodiscard]] Result<void> LifetimesNeedAllocationProfile(const std::string& path);

// Parses (ParseAllocationProfileFile: exit 2 for a corrupt or cut file) and
// unsamples the allocation profile at `path`.
[[nodiscard]] Result<LoadedAllocationProfile> LoadAllocationProfile(const std::string& path);

// The metric of a report on an allocation profile: kAllocSpace unless the
// request chose one.
report::Metric AllocationMetric(const ReportRequest& request);

// pprof's header for an allocation profile: Go's allocs sample types,
// time_nanos the window's start, duration_nanos its length.
void SetAllocationPprofOptions(const report::AllocationSummary& summary,
                               report::pprof::PprofOptions& options);

// The --lifetimes table of `loaded` in request.format (text or json), its
// sites named by `symbolizer` as the text report names flat functions.
[[nodiscard]] Result<void> WriteLifetimes(const ReportRequest& request,
                                          const LoadedAllocationProfile& loaded,
                                          report::pprof::ParallelSymbolizer& symbolizer,
                                          std::ostream& out);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_ALLOCATION_REPORT_H_
