#ifndef MEMPROF_CLI_REPORT_RENDER_SVG_REPORT_H_
#define MEMPROF_CLI_REPORT_RENDER_SVG_REPORT_H_

#include <ostream>
#include <string>

#include "cli/report/render/flame_graph.h"
#include "cli/report/render/flame_layout.h"
#include "cli/report/render/report_renderer.h"

namespace memprof::report::render {

struct SvgOptions {
  std::string title = "memprof heap flame graph";
  double width = 1200;  // pixels
  // Frames narrower than this share of the total are merged or left out
  // (flame_layout.h): 0.1% is about one pixel at the default width.
  double min_frame_fraction = 0.001;
};

// `memprofctl report --format svg`: one standalone, interactive flame graph.
//
// Classic orientation: the root ("all") is the bottom row and callees stack
// upwards, so the tops of the flames are the functions that allocated.
// Width is a frame's share of the metric (in-use space by default,
// objects with --inuse-objects). Colours are a hash of the name: warm for
// the program's code, blue for the C/C++ runtime and allocator, grey for
// unresolved addresses. The embedded script adds hover details, click to
// zoom, and a regex search (Ctrl-F, "/" or the Search button).
//
// An aggregation of a --base diff gives a differential flame graph
// (flame_graph.h): widths are growth plus shrinkage, colours the sign of
// each frame's net change (flame_colors.h), with a legend under the title,
// tooltips with the signed change and both dumps' values, and a second
// script for the hover line (diff_svg.h, flame_graph_script.h).
class SvgReportRenderer final : public ReportRenderer {
 public:
  explicit SvgReportRenderer(SvgOptions options = {}) : options_(std::move(options)) {}
  [[nodiscard]] Result<void> Render(const aggregate::Aggregation& aggregation,
                                    std::ostream& out) const override;

 private:
  SvgOptions options_;
};

// The svg of an already built and laid out graph (what Render does after
// BuildFlameGraph and LayoutFlameGraph), for tests and other front ends.
void WriteFlameGraphSvg(const FlameGraph& graph, const FlameLayout& layout,
                        const SvgOptions& options, std::ostream& out);

// A value in human units: "512 B", "12.3 KiB", "4.0 MiB"... or "1,234 objects".
std::string HumanValue(double value, Metric metric);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_SVG_REPORT_H_
