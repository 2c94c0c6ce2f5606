#include "cli/report/report_symbolizer.h"

#include <string>
#include <utility>

#include "cli/report/profile_loader.h"
#include "cli/report/symbolize/symbolizer.h"

namespace memprof::report {

symbolize::SymbolizerOptions SymbolizerOptionsFor(const ReportRequest& request) {
  symbolize::SymbolizerOptions options;
  options.lines = request.lines;
  options.nearest_symbol = request.nearest_symbol;
  options.pid = request.pid;
  options.sysroot = request.sysroot;
  if (request.pid && options.sysroot.empty()) {
    options.sysroot = "/proc/" + std::to_string(*request.pid) + "/root";
  }
  return options;
}

Result<std::unique_ptr<pprof::ParallelSymbolizer>> StartReportSymbolizer(
    const ReportRequest& request, const std::vector<symbolize::MemoryMapping>& mappings) {
  const symbolize::SymbolizerOptions options = SymbolizerOptionsFor(request);
  auto symbolizer = symbolize::Symbolizer::Create(mappings, options);
  if (!symbolizer) return Fail(symbolizer.error());
  return std::make_unique<pprof::ParallelSymbolizer>(std::move(*symbolizer), mappings, options,
                                                     ReportThreadCount());
}

Result<std::unique_ptr<pprof::ParallelSymbolizer>> MakeReportSymbolizer(
    const ReportRequest& request, const std::vector<symbolize::MemoryMapping>& mappings,
    std::span<const uint64_t> addresses) {
  auto symbolizer = StartReportSymbolizer(request, mappings);
  if (symbolizer) (*symbolizer)->ResolveAll(addresses);
  return symbolizer;
}

}  // namespace memprof::report
