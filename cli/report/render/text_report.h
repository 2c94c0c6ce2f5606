#ifndef MEMPROF_CLI_REPORT_RENDER_TEXT_REPORT_H_
#define MEMPROF_CLI_REPORT_RENDER_TEXT_REPORT_H_

#include "cli/report/render/report_renderer.h"

namespace memprof::analysis {

// jeprof --text, line for line:
//   Total: 12.3 MB
//        flat  flat%   sum%      cum   cum% name
// ("%8s %6s %6s %8s %6s %s"), sorted by flat (or cum), rows that are zero
// in both columns left out. The Total line is the whole profile; the
// percentages are of what the filters kept, as in jeprof.
class TextReportRenderer final : public ReportRenderer {
 public:
  explicit TextReportRenderer(ReportOptions options) : options_(options) {}
  [[nodiscard]] Result<void> Render(const Aggregation& aggregation,
                                    std::ostream& out) const override;

 private:
  ReportOptions options_;
};

}  // namespace memprof::analysis

#endif  // MEMPROF_CLI_REPORT_RENDER_TEXT_REPORT_H_
