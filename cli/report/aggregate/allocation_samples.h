#ifndef MEMPROF_CLI_REPORT_AGGREGATE_ALLOCATION_SAMPLES_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_ALLOCATION_SAMPLES_H_

#include <cstdint>
#include <vector>

#include "cli/report/model/allocation_profile.h"
#include "cli/report/model/profile.h"

namespace memprof::report::aggregate {

// jemalloc samples an allocation of usable size z with probability
// 1 - exp(-z/P), P the sample interval (a Poisson process over allocated
// bytes). One sampled allocation therefore stands for 1/(1 - exp(-z/P))
// allocations of z bytes: z/(1 - exp(-z/P)) bytes. jeprof can only apply
// this per stack with the stack's average size; an allocation profile has
// every sampled allocation's own size, so each record is scaled by its own
// probability, which is exact for stacks of mixed sizes. A size of 0 (never
// sampled by jemalloc) counts as one object of 0 bytes.
Amount UnsampleAllocation(uint64_t usize, uint64_t sample_interval);

// Whether `record` belongs to the window: jemalloc's ring also holds what
// was allocated after window_end_ns, before the agent dumped it.
bool InWindow(const AllocationRecord& record, const AllocationProfileHeader& header);

// Whether `record` was freed by the window's end: released, and either
// without a recorded time or freed at window_end_ns or before (jemalloc
// says "released" at dump time, which comes a little after the window).
bool FreedInWindow(const AllocationRecord& record, const AllocationProfileHeader& header);

// The header facts and record counts the reports print.
AllocationSummary Summarize(const AllocationProfile& profile);

// An allocation profile as the heap model every report reads: one Sample
// per distinct allocation stack (first-seen order), `alloc` = every record
// of the window, unsampled per record, `inuse` = those not FreedInWindow
// (the survivors at the window's end); has_alloc, sample_period = the
// sample interval, the maps moved in.
struct AllocationSamples {
  HeapProfile profile;
  // Per record of the input: the index of its Sample, or kOutsideWindow.
  std::vector<uint32_t> sample_of_record;
  AllocationSummary summary;
  static constexpr uint32_t kOutsideWindow = UINT32_MAX;
};
AllocationSamples ToHeapProfile(AllocationProfile& profile);

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_ALLOCATION_SAMPLES_H_
