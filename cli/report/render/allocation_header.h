#ifndef MEMPROF_CLI_REPORT_RENDER_ALLOCATION_HEADER_H_
#define MEMPROF_CLI_REPORT_RENDER_ALLOCATION_HEADER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/report/model/allocation_profile.h"

namespace memprof::report::render {

// What the reports of an allocation profile say above their figures: that
// it is one, its window, how it ended, its records and sampling. The text
// form ends with a warning line when jemalloc lost records.
void WriteAllocationHeaderText(const AllocationSummary& summary, std::ostream& out);

// The same facts for --format json ("allocation_profile" in
// docs/schemas/report.schema.json, also in report-lifetimes.schema.json).
nlohmann::ordered_json AllocationHeaderJson(const AllocationSummary& summary);

// A duration in human units: "850 ns", "12.5 us", "3.2 ms", "1.50 s".
std::string HumanDuration(uint64_t ns);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_ALLOCATION_HEADER_H_
