#ifndef MEMPROF_CLI_REPORT_AGGREGATE_FRAME_NAMES_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_FRAME_NAMES_H_

#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"

namespace memprof::report::aggregate {

// The names the stack-shaped reports (collapsed, the svg flame graph) give
// the frames of one location, root first: the function that contains the
// address, then its inlined callees, each of those with jeprof's "[inline]"
// suffix. Full (demangled) function names; module+0xOFFSET when unknown.
// Shared so that a flame graph and the folded stacks it could be drawn
// from always agree frame for frame.
// With `lines` (--lines), each name ends with FrameLineSuffix.
std::vector<std::string> RootFirstFrameNames(const Location& location, bool lines = false);

// " file:line" of a frame for --lines (jeprof's "function file:line"), or ""
// when its debug info has no line.
std::string FrameLineSuffix(const Frame& frame);

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_FRAME_NAMES_H_
