#ifndef MEMPROF_CLI_REPORT_RENDER_FLAME_GRAPH_H_
#define MEMPROF_CLI_REPORT_RENDER_FLAME_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/symbolization.h"
#include "cli/report/model/profile.h"

namespace memprof::report::render {

// What a frame is, for its colour: the program's own code (warm colours),
// the C/C++ runtime and the allocator (cool), or an address nobody could
// name (grey). kRoot is the "all" frame; kMerged stands for several frames
// too narrow to draw one by one (see flame_layout.h).
enum class FrameKind : uint8_t { kRoot, kApp, kRuntime, kUnknown, kMerged };

// One frame of the flame graph: a function reached through one particular
// chain of callers. Its value counts every stack that passes through it.
struct FlameNode {
  uint32_t name_id = 0;  // index into FlameGraph::names
  FrameKind kind = FrameKind::kApp;
  double value = 0;                // the width (in a diff, see FlameGraph::is_diff)
  uint32_t depth = 0;        // the root is 0, its callees 1, ...
  uint32_t first_child = 0;  // its children: FlameGraph::child_ids[first_child, + child_count)
  uint32_t child_count = 0;
};

// A frame of a diff: the net change of the stacks through it (signed), and
// what the base had in them (so now = base + change).
struct FrameChange {
  double change = 0;
  double base = 0;
};

// The call tree of an aggregated profile, root first: stacks that share a
// caller chain share nodes, so a frame is as wide as the memory allocated
// under it. Flat (indexes, not pointers) so that deep stacks cost no
// recursion and the layout can walk it with an explicit stack.
//
// A --base diff (is_diff) is a differential flame graph: a frame's value
// (its width) is the sum of the absolute changes in its subtree, i.e. its
// own |change| as a leaf plus its callees' widths, so growth and shrinkage
// both take room and a frame whose callees moved memory between them is
// as wide as what moved. The change is taken per drawn path, after stacks
// with the same names merged: two call sites in one function that trade
// bytes cancel out, as they would in the frames the reader sees.
struct FlameGraph {
  Metric metric = Metric::kInuseSpace;
  // The profile's header total (Aggregation::total): more than the root's
  // value when --focus/--ignore dropped stacks.
  double profile_total = 0;
  // Stacks left out because their value is not positive (only a --base diff
  // has them): a width cannot be negative. Always 0 when is_diff.
  size_t negative_stacks = 0;
  bool is_diff = false;
  double base_total = 0;         // a diff only: the base's header total
  std::vector<FlameNode> nodes;  // nodes[0] is the root, named "all"
  // A diff only: per node, its change. Beside the nodes rather than in
  // them, so an ordinary graph's nodes stay as small as they were.
  std::vector<FrameChange> changes;
  // Each distinct frame name once, as the collapsed report spells it
  // (frame_names.h): a call tree repeats a name in many nodes.
  std::vector<std::string> names;
  // Every node's children side by side, as indexes into `nodes`: widest
  // first, ties by name. One array rather than a vector per node (a big
  // profile has 170,000 nodes).
  std::vector<uint32_t> child_ids;
  // Per node, how many nodes below it were left unmade (BuildFlameGraph
  // with a min_fraction: it makes no callees of a frame too narrow to draw).
  // Empty when the tree is whole.
  std::vector<size_t> unmade;

  const FlameNode& root() const { return nodes.front(); }
  size_t unmade_below(uint32_t node) const { return unmade.empty() ? 0 : unmade[node]; }
  std::span<const uint32_t> children(const FlameNode& node) const {
    return {child_ids.data() + node.first_child, node.child_count};
  }
  // Gives `node` these children, in this order (for graphs made by hand).
  void SetChildren(uint32_t node, std::span<const uint32_t> ids);
  const std::string& name(const FlameNode& node) const { return names[node.name_id]; }
  FrameChange change(uint32_t node) const { return is_diff ? changes[node] : FrameChange{}; }
};

// Merges the aggregation's stacks (after jeprof's allocator cut and the
// filters, exactly the stacks of the collapsed report) into a call tree,
// valued by the aggregation's metric. Stacks that the cut emptied count in
// the root only.
//
// With `min_fraction` above 0 (not in a diff, whose widths are known only
// once the whole tree is), a frame narrower than that fraction of the root
// is made without its callees: they are narrower still, so no layout with
// that fraction draws them, and only their number is kept (`unmade`). On a
// deep profile that is nearly every node.
FlameGraph BuildFlameGraph(const aggregate::Aggregation& aggregation, double min_fraction = 0);

// The colour class of one symbolized frame.
FrameKind ClassifyFrame(const aggregate::Frame& frame);

}  // namespace memprof::report::render

#endif  // MEMPROF_CLI_REPORT_RENDER_FLAME_GRAPH_H_
