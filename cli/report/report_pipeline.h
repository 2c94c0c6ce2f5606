#ifndef MEMPROF_CLI_REPORT_REPORT_PIPELINE_H_
#define MEMPROF_CLI_REPORT_REPORT_PIPELINE_H_

#include <ostream>

#include "cli/report/aggregate/symbolization_summary.h"
#include "cli/report/report_request.h"
#include "common/result.h"

namespace memprof::report {

// dump(s) -> unsample (-> sum -> minus base(s)) -> symbolize -> the format.
// One dump without a base takes exactly the single-dump path (no merge step).
// With `trend`, RunTrendPipeline instead. An allocation profile (told by its
// first line) is read alone: parse -> unsample per record -> symbolize ->
// the format, ranked by bytes allocated unless a metric was chosen, or the
// --lifetimes table (allocation_report.h).
// When `symbolization` is given it receives what could not be named and how
// to fix it (for stderr: aggregate::FormatSymbolizationSummary); --format json
// carries the same in its "symbolization" object.
// Errors: kInvalidArgument for a malformed dump ("file:line: what") or a bad
// regex, kNotFound for a missing file, kInternal when writing fails.
[[nodiscard]] Result<void> RunReportPipeline(
    const ReportRequest& request, std::ostream& out,
    report::aggregate::SymbolizationSummary* symbolization = nullptr);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_REPORT_PIPELINE_H_
