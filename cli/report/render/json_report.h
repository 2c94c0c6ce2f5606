#ifndef MEMPROF_CLI_REPORT_RENDER_JSON_REPORT_H_
#define MEMPROF_CLI_REPORT_RENDER_JSON_REPORT_H_

#include "cli/report/render/report_renderer.h"

namespace memprof::report::render {

// The report for scripts, one JSON object:
//   {"metric": "inuse_space", "unit": "bytes", "total": 123.0, "shown_total": 120.0,
//    "functions": [{"name", "flat", "flat_percent", "cum", "cum_percent"}...],
//    "stacks": [{"value": 64.0, "frames": [{"address": "0x...", "function",
//                "file", "line", "module", "module_offset", "inlined"}...]}...]}
// Values are the unsampled doubles (bytes, not MB); frames leaf first,
// inlined frames before the function that contains them. `top` limits the
// functions, not the stacks.
//
// With --base every value is a signed change, and the report adds both
// dumps' values: "diff": true, "total_now" and "total_base" after
// "shown_total"; "flat_now", "flat_base", "cum_now", "cum_base" per
// function; "now" and "base" after each stack's "value". Unchanged stacks
// are listed too (value 0), since they count in "now" and "base".
class JsonReportRenderer final : public ReportRenderer {
 public:
  explicit JsonReportRenderer(ReportOptions options) : options_(options) {}
  [[nodiscard]] Result<void> Render(const aggregate::Aggregation& aggregation,
                                    std::ostream& out) const override;

 private:
  ReportOptions options_;
};

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_JSON_REPORT_H_
