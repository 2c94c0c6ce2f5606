#ifndef MEMPROF_CLI_REPORT_REPORT_SYMBOLIZER_H_
#define MEMPROF_CLI_REPORT_REPORT_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cli/report/pprof/parallel_symbolizer.h"
#include "cli/report/report_request.h"
#include "cli/report/symbolize/memory_map.h"
#include "cli/report/symbolize/symbolizer_options.h"
#include "common/result.h"

namespace memprof::report {

// The symbolizer settings a request implies (--lines, --pid, --sysroot).
symbolize::SymbolizerOptions SymbolizerOptionsFor(const ReportRequest& request);

// The report's symbolizer over `mappings`, with the request's settings,
// its ReportThreadCount() threads started (ParallelSymbolizer): the caller
// calls ResolveAll.
[[nodiscard]] Result<std::unique_ptr<pprof::ParallelSymbolizer>> StartReportSymbolizer(
    const ReportRequest& request, const std::vector<symbolize::MemoryMapping>& mappings);

// The same with every one of `addresses` named up front.
[[nodiscard]] Result<std::unique_ptr<pprof::ParallelSymbolizer>> MakeReportSymbolizer(
    const ReportRequest& request, const std::vector<symbolize::MemoryMapping>& mappings,
    std::span<const uint64_t> addresses);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_REPORT_SYMBOLIZER_H_
