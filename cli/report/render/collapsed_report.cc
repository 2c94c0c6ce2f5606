#include "cli/report/render/collapsed_report.h"

#include <string>
#include <vector>

#include "cli/report/aggregate/frame_names.h"
#include "cli/report/render/report_format.h"
#include "common/chunk_writer.h"

namespace memprof::report::render {
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

// Root first: the location's outermost frame first, inlined callees after,
// joined by ';'. A location recurs in thousands of stacks: built once.
std::string LocationText(const aggregate::Location& location, bool lines) {
  std::string text;
  for (const std::string& name : aggregate::RootFirstFrameNames(location, lines)) {
    if (!text.empty()) text += ';';
    text += FoldedName(name);
  }
  return text;
}

}  // namespace

// Lines go to one buffer written a megabyte at a time: a big profile's
// folded stacks are a hundred megabytes, and a stream insertion per frame
// cost more than building them. The writing happens on another thread
// (ChunkWriter) while the next megabyte is built.
Result<void> CollapsedReportRenderer::Render(const aggregate::Aggregation& aggregation,
                                             std::ostream& out) const {
  std::vector<std::string> locations;
  locations.reserve(aggregation.locations.size());
  for (const aggregate::Location& location : aggregation.locations)
    locations.push_back(LocationText(location, aggregation.lines));
  std::string text;
  ChunkWriter writer(out);
  for (const aggregate::StackSample& stack : aggregation.stacks) {
    if (stack.locations.empty()) continue;
    for (size_t i = stack.locations.size(); i-- > 0;) {
      text += locations[stack.locations[i]];
      text += i == 0 ? ' ' : ';';
    }
    text += std::to_string(PerlInteger(stack.value));
    text += '\n';
    if (text.size() >= kReportFlushBytes) text = writer.Write(std::move(text));
  }
  writer.Write(std::move(text));
  writer.Finish();
  return CheckWritten(out);
}

}  // namespace memprof::report::render
