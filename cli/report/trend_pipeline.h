#ifndef MEMPROF_CLI_REPORT_TREND_PIPELINE_H_
#define MEMPROF_CLI_REPORT_TREND_PIPELINE_H_

#include <ostream>

#include "cli/report/report_request.h"
#include "common/result.h"

namespace memprof::report {

// `report --trend DUMP...`: orders the dumps by time (trend/dump_time.h),
// puts them in one address space, symbolizes every address once, takes the
// text report's rows of each dump and ranks them by steady growth
// (trend/trend.h). kInvalidArgument (a usage error) for fewer than 3 dumps,
// a --base, or a format other than text and json; otherwise the errors of
// RunReportPipeline.
[[nodiscard]] Result<void> RunTrendPipeline(const ReportRequest& request, std::ostream& out);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_TREND_PIPELINE_H_
