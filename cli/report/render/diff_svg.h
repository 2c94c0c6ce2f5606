#ifndef MEMPROF_CLI_REPORT_RENDER_DIFF_SVG_H_
#define MEMPROF_CLI_REPORT_RENDER_DIFF_SVG_H_

#include <ostream>
#include <string>

#include "cli/report/render/flame_graph.h"

namespace memprof::report::render {

// The parts of a differential flame graph's svg (FlameGraph::is_diff) that
// an ordinary one does not have. svg_report.cc puts them together.

// Extra height of the header: one row for the legend.
constexpr double kDiffLegendHeight = 18;

// "+1.2 MiB", "-512 B", "+3 objects"; "0 B" for no change.
std::string SignedHumanValue(double value, Metric metric);

// A frame's change with both sides: "+1.2 MiB (now 3.4 MiB, base 2.2 MiB)".
std::string DiffDetail(double change, double base, Metric metric);

// What the title adds: what the colours mean and the net change.
std::string DiffTitleSuffix(const FlameGraph& graph);

// The largest |change| of any frame but the root, which scales the colours:
// the root holds every change and would leave all other frames pale.
double MaxAbsChange(const FlameGraph& graph);

// The legend row with its top at `y`: swatches of both colour families and
// of "no net change", and what a width means.
void WriteDiffLegend(double x, double y, std::ostream& out);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_DIFF_SVG_H_
