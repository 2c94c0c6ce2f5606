#include "cli/report/render/flame_layout.h"

#include <algorithm>
#include <span>

namespace memprof::report::render {
namespace {

// Places the children of `parent` (itself at `offset`): the wide ones left
// to right, widest first, then at most one merged rectangle. Returns their
// rectangles in drawing order; the caller descends into the real ones.
std::vector<FlameRect> PlaceChildren(const FlameGraph& graph, uint32_t parent, double offset,
                                     double min_value, FlameLayout& layout) {
  std::vector<FlameRect> placed;
  uint32_t depth = graph.nodes[parent].depth + 1;
  FlameRect merged{FlameRect::kMergedNode, 0, 0, depth, 0};
  for (uint32_t child : graph.children(graph.nodes[parent])) {
    const FlameNode& node = graph.nodes[child];
    if (node.value >= min_value) {
      FrameChange change = graph.change(child);
      placed.push_back({child, offset, node.value, depth, 0, change.change, change.base});
      offset += node.value;
      continue;
    }
    merged.value += node.value;
    FrameChange change = graph.change(child);
    merged.change += change.change;
    merged.base += change.base;
    ++merged.merged_frames;
    layout.omitted_frames += SubtreeSize(graph, child);
  }
  // A lone narrow child is simply left out: a "[1 small frames]" box would
  // say no more than the gap it leaves in its parent.
  if (merged.merged_frames > 1 && merged.value >= min_value) {
    merged.offset = offset;
    placed.push_back(merged);
  }
  return placed;
}

}  // namespace

size_t SubtreeSize(const FlameGraph& graph, uint32_t node) {
  size_t size = 0;
  std::vector<uint32_t> todo = {node};
  while (!todo.empty()) {
    uint32_t next = todo.back();
    todo.pop_back();
    size += 1 + graph.unmade_below(next);
    std::span<const uint32_t> children = graph.children(graph.nodes[next]);
    todo.insert(todo.end(), children.begin(), children.end());
  }
  return size;
}

FlameLayout LayoutFlameGraph(const FlameGraph& graph, double min_fraction) {
  FlameLayout layout;
  if (graph.nodes.empty()) return layout;
  double min_value = graph.root().value * std::max(min_fraction, 0.0);
  FrameChange root = graph.change(0);
  std::vector<FlameRect> todo = {{0, 0, graph.root().value, 0, 0, root.change, root.base}};
  while (!todo.empty()) {
    FlameRect rect = todo.back();
    todo.pop_back();
    layout.rects.push_back(rect);
    layout.max_depth = std::max(layout.max_depth, rect.depth);
    if (rect.node == FlameRect::kMergedNode) continue;
    std::vector<FlameRect> children =
        PlaceChildren(graph, rect.node, rect.offset, min_value, layout);
    // Reversed onto the stack, so the widest child is drawn first.
    todo.insert(todo.end(), children.rbegin(), children.rend());
  }
  return layout;
}

}  // namespace memprof::report::render
