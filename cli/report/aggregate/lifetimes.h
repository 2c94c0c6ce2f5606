#ifndef MEMPROF_CLI_REPORT_AGGREGATE_LIFETIMES_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_LIFETIMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/report/aggregate/allocation_samples.h"
#include "cli/report/model/allocation_profile.h"
#include "cli/report/model/profile.h"

namespace memprof::report::aggregate {

// What `report --lifetimes` shows per allocation site: every unsampled
// amount of the records whose stack the text report attributes (flat) to
// `function`.
struct LifetimeSite {
  std::string function;
  Amount allocated;  // every record of the window
  Amount freed;      // FreedInWindow
  Amount survived;   // the rest: alive at the window's end
  double allocation_rate = 0;  // allocated bytes per second of the covered span
  // Lifetimes (dalloc_time - alloc_time) of the freed records that have a
  // dalloc_time, weighted by their unsampled object counts; none when no
  // freed record has one.
  std::optional<uint64_t> lifetime_p50_ns;
  std::optional<uint64_t> lifetime_p90_ns;
  std::optional<uint64_t> lifetime_p99_ns;
};

// The name of a site whose stacks hold only allocator frames.
inline constexpr const char* kAllocatorOnlySite = "(allocator frames only)";

// One lifetime and the objects it stands for.
struct WeightedLifetime {
  uint64_t ns = 0;
  double weight = 0;
};

// The smallest lifetime L such that the lifetimes up to L weigh at least
// `fraction` (0..1] of the total weight; none for no weight. Sorts
// `lifetimes` in place.
std::optional<uint64_t> WeightedPercentile(std::vector<WeightedLifetime>& lifetimes,
                                           double fraction);

// Per site, sorted by allocated bytes (descending, ties by name).
// `site_of_sample`: FlatFunctionNames of samples.profile ("" is
// kAllocatorOnlySite). `profile` is the input of ToHeapProfile (its
// records; the maps may have moved).
std::vector<LifetimeSite> ComputeLifetimes(const AllocationProfile& profile,
                                           const AllocationSamples& samples,
                                           const std::vector<std::string>& site_of_sample);

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_LIFETIMES_H_
