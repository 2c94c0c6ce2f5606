#ifndef MEMPROF_CLI_REPORT_RENDER_TEXT_REPORT_H_
#define MEMPROF_CLI_REPORT_RENDER_TEXT_REPORT_H_

#include "cli/report/render/report_renderer.h"

namespace memprof::report::render {

// jeprof --text, with its columns named and its "MB" spelled MiB (it
// divides by 2^20, and every other command says MiB):
//   Total: 12.3 MiB
//       flat  flat%   sum%      cum   cum% function
//        1.2  10.0%  10.0%      3.4  27.6% Leaf
// (rows "%8s %6s %6s %8s %6s %s"; the header only above rows), sorted by flat (or cum), rows that are zero
// in both columns left out. The Total line is the whole profile; the
// percentages are of what the filters kept, as in jeprof.
class TextReportRenderer final : public ReportRenderer {
 public:
  explicit TextReportRenderer(ReportOptions options) : options_(options) {}
  [[nodiscard]] Result<void> Render(const aggregate::Aggregation& aggregation,
                                    std::ostream& out) const override;

 private:
  ReportOptions options_;
};

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_TEXT_REPORT_H_
