#ifndef MEMPROF_CLI_REPORT_RENDER_REPORT_RENDERER_H_
#define MEMPROF_CLI_REPORT_RENDER_REPORT_RENDERER_H_

#include <cstddef>
#include <optional>
#include <ostream>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/symbolization_summary.h"
#include "cli/report/model/allocation_profile.h"
#include "common/result.h"

namespace memprof::report::render {

// Presentation options shared by the renderers.
struct ReportOptions {
  bool show_bytes = false;    // jeprof --show_bytes: bytes instead of MiB
  bool sort_by_cum = false;   // jeprof --cum
  std::optional<size_t> top;  // at most this many function rows
  // What symbolization found, for the renderers that carry it (json).
  const aggregate::SymbolizationSummary* symbolization = nullptr;
  // The report is of an allocation profile: text and json say so first.
  const AllocationSummary* allocation = nullptr;
};

// Writes one aggregated profile in one format. The pprof and flame-graph
// writers of `memprofctl report` implement this too.
class ReportRenderer {
 public:
  virtual ~ReportRenderer() = default;
  // Fails (kInternal) only when writing to `out` fails.
  [[nodiscard]] virtual Result<void> Render(const aggregate::Aggregation& aggregation,
                                            std::ostream& out) const = 0;
};

// How much text the renderers of big reports (collapsed, json) build before
// they write it: a megabyte, so few writes and a bounded buffer.
inline constexpr size_t kReportFlushBytes = 1 << 20;

// The common end of every Render: turn a failed stream into an Error.
inline Result<void> CheckWritten(std::ostream& out) {
  out.flush();
  if (!out) return Fail(ErrorCode::kInternal, "writing the report failed");
  return {};
}

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_REPORT_RENDERER_H_
