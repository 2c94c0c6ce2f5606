#ifndef MEMPROF_CLI_REPORT_RENDER_LIFETIMES_REPORT_H_
#define MEMPROF_CLI_REPORT_RENDER_LIFETIMES_REPORT_H_

#include <cstddef>
#include <optional>
#include <ostream>
#include <vector>

#include "cli/report/aggregate/lifetimes.h"
#include "cli/report/model/allocation_profile.h"
#include "common/result.h"

namespace memprof::report::render {

// `report --lifetimes`: the allocation profile's header, then one row per
// site (ComputeLifetimes' order, at most `top`): bytes allocated, freed and
// survived, objects allocated, the allocation rate and the lifetime
// percentiles of the freed objects. A lifetime below the clock's
// resolution reads "<resolution" (the clock could not tell it from 0), and
// "-" when no freed object had a time. Fails (kInternal) only when writing
// fails.
[[nodiscard]] Result<void> WriteLifetimesText(const AllocationSummary& summary,
                                              const std::vector<aggregate::LifetimeSite>& sites,
                                              std::optional<size_t> top, std::ostream& out);

// The same as one JSON document (docs/schemas/report-lifetimes.schema.json):
// schema_version, "allocation_profile" (AllocationHeaderJson) and "sites",
// every number unrounded, null for a percentile without data.
[[nodiscard]] Result<void> WriteLifetimesJson(const AllocationSummary& summary,
                                              const std::vector<aggregate::LifetimeSite>& sites,
                                              std::optional<size_t> top, std::ostream& out);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_LIFETIMES_REPORT_H_
