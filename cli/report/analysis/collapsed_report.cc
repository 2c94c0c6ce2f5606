#include "cli/report/analysis/collapsed_report.h"

#include <string>

#include "cli/report/analysis/frame_names.h"
#include "cli/report/analysis/report_format.h"

namespace memprof::analysis {
namespace {

// ';' separates frames and a newline ends the record, so neither may
// appear inside a name.
std::string FoldedName(const std::string& name) {
  std::string folded = name;
  for (char& c : folded) {
    if (c == ';' || c == '\n' || c == '\r') c = '_';
  }
  return folded;
}

// Root first: the location's outermost frame first, inlined callees after.
void AppendLocation(const Location& location, std::string& line) {
  for (const std::string& name : RootFirstFrameNames(location)) {
    if (!line.empty()) line += ';';
    line += FoldedName(name);
  }
}

}  // namespace

Result<void> CollapsedReportRenderer::Render(const Aggregation& aggregation,
                                             std::ostream& out) const {
  std::string line;
  for (const StackSample& stack : aggregation.stacks) {
    if (stack.locations.empty()) continue;
    line.clear();
    for (size_t i = stack.locations.size(); i-- > 0;) {
      AppendLocation(aggregation.locations[stack.locations[i]], line);
    }
    out << line << ' ' << PerlInteger(stack.value) << '\n';
  }
  return CheckWritten(out);
}

}  // namespace memprof::analysis
