#ifndef MEMPROF_CLI_REPORT_RENDER_FLAME_LAYOUT_H_
#define MEMPROF_CLI_REPORT_RENDER_FLAME_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "cli/report/render/flame_graph.h"

namespace memprof::report::render {

// One rectangle to draw, in value units: `offset` from the root's left edge
// and `value` wide, on row `depth` (the root's row is 0).
struct FlameRect {
  static constexpr uint32_t kMergedNode = std::numeric_limits<uint32_t>::max();

  uint32_t node = kMergedNode;  // index into FlameGraph::nodes, or kMergedNode
  double offset = 0;
  double value = 0;
  uint32_t depth = 0;
  // For kMergedNode: how many sibling frames (with all their callees) it stands for.
  uint32_t merged_frames = 0;
  // A diff only: the frame's FlameNode::change and ::base, summed over the
  // frames a kMergedNode stands for.
  double change = 0;
  double base = 0;
};

struct FlameLayout {
  std::vector<FlameRect> rects;  // pre-order: a frame, then its callees, widest first
  size_t omitted_frames = 0;     // tree nodes not drawn as their own rectangle
  uint32_t max_depth = 0;        // deepest row drawn
};

// Positions the frames of `graph` and drops those narrower than
// `min_fraction` of the root, so that a 20,000-stack profile still gives a
// small file: at most 1 / min_fraction rectangles fit on a row.
//
// A frame's children that are each too narrow are merged into one
// "[N frames]" rectangle at the right end of their parent when together
// they are wide enough, and otherwise left out. Either way their value stays
// in the parent's width (a leaf is never drawn wider than its callers), and
// nothing below a dropped frame is drawn: its callees are narrower still.
FlameLayout LayoutFlameGraph(const FlameGraph& graph, double min_fraction);

// The number of nodes in the subtree of `node`, itself included, with those
// BuildFlameGraph left unmade.
size_t SubtreeSize(const FlameGraph& graph, uint32_t node);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_FLAME_LAYOUT_H_
