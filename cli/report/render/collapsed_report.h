#ifndef MEMPROF_CLI_REPORT_RENDER_COLLAPSED_REPORT_H_
#define MEMPROF_CLI_REPORT_RENDER_COLLAPSED_REPORT_H_

#include "cli/report/render/report_renderer.h"

namespace memprof::report::render {

// Folded stacks for flamegraph.pl, speedscope, Pyroscope ("jeprof
// --collapsed"): one line per stack, "root;caller;...;leaf <value>", the
// value an integer (bytes or objects, truncated as jeprof's %d does).
// Names are the full function names; inlined frames get jeprof's
// "[inline]" suffix; unknown frames are module+0xOFFSET. Stacks the allocator
// cut emptied are left out.
class CollapsedReportRenderer final : public ReportRenderer {
 public:
  [[nodiscard]] Result<void> Render(const aggregate::Aggregation& aggregation,
                                    std::ostream& out) const override;
};

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_COLLAPSED_REPORT_H_
