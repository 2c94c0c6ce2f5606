#include "cli/report/analysis/flame_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "cli/report/analysis/frame_names.h"

namespace memprof::analysis {
namespace {

constexpr uint32_t kRootNode = 0;

// Shared objects of the C/C++ runtime and the allocator, by file-name prefix.
constexpr std::array<std::string_view, 10> kRuntimeModules = {
    "libc.so",  "libc-",      "libstdc++", "libjemalloc", "libtcmalloc",
    "ld-linux", "libgcc_s",   "libm.so",   "libpthread",  "libdl"};

// Runtime code that the compiler inlined or instantiated into the program
// (templates, operator new) still reads as "not my code" to the user.
constexpr std::array<std::string_view, 10> kRuntimeNamePrefixes = {
    "std::",  "__gnu_cxx::", "__cxa",   "__libc_",         "operator new",
    "malloc", "calloc",      "realloc", "operator delete", "je_"};

bool StartsWithAny(std::string_view text, std::span<const std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [text](std::string_view prefix) { return text.starts_with(prefix); });
}

// One frame of a location, ready to be inserted: its interned name and kind.
struct LocationFrame {
  uint32_t name_id;
  FrameKind kind;
};

// Builds the tree with a (parent, name) -> child index, which keeps the
// insertion of a 20,000-stack profile linear in its number of frames.
class TreeBuilder {
 public:
  explicit TreeBuilder(const Aggregation& aggregation);
  // Room for as many nodes as the stacks have locations (inline frames
  // aside, an upper bound): growing by doubling copied and touched the
  // node array several times over.
  void Reserve();
  void AddStack(const StackSample& stack);
  FlameGraph Finish();

 private:
  uint32_t NameId(std::string name);
  const std::vector<LocationFrame>& FramesOf(uint32_t location);
  uint32_t Child(uint32_t parent, const LocationFrame& frame);
  void AddDiffStack(const StackSample& stack);
  void SetDiffWidths();

  const Aggregation& aggregation_;
  FlameGraph graph_;  // graph_.names: the interned names
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::vector<std::vector<LocationFrame>> location_frames_;  // filled lazily
  absl::flat_hash_map<uint64_t, uint32_t> children_;         // parent << 32 | name id
  std::vector<double> own_change_;  // a diff: per node, the change of stacks ending there
};

TreeBuilder::TreeBuilder(const Aggregation& aggregation)
    : aggregation_(aggregation), location_frames_(aggregation.locations.size()) {
  graph_.metric = aggregation.metric;
  graph_.profile_total = aggregation.total;
  graph_.is_diff = aggregation.is_diff;
  graph_.base_total = aggregation.total_base;
  graph_.nodes.push_back({NameId("all"), FrameKind::kRoot, 0, 0, {}});
}

uint32_t TreeBuilder::NameId(std::string name) {
  auto [it, inserted] =
      name_ids_.emplace(std::move(name), static_cast<uint32_t>(graph_.names.size()));
  if (inserted) graph_.names.push_back(it->first);
  return it->second;
}

// Each inline frame is classified on its own, so a std:: helper inlined
// into the program's code still reads as runtime.
const std::vector<LocationFrame>& TreeBuilder::FramesOf(uint32_t location) {
  std::vector<LocationFrame>& frames = location_frames_[location];
  if (!frames.empty()) return frames;
  const Location& source = aggregation_.locations[location];
  std::vector<std::string> names = RootFirstFrameNames(source);
  for (size_t i = 0; i < names.size(); ++i) {
    const Frame& frame = source.frames[source.frames.size() - 1 - i];
    frames.push_back({NameId(std::move(names[i])), ClassifyFrame(frame)});
  }
  return frames;
}

uint32_t TreeBuilder::Child(uint32_t parent, const LocationFrame& frame) {
  uint64_t key = (uint64_t{parent} << 32) | frame.name_id;
  auto [it, inserted] = children_.emplace(key, static_cast<uint32_t>(graph_.nodes.size()));
  if (inserted) {
    uint32_t depth = graph_.nodes[parent].depth + 1;
    graph_.nodes.push_back({frame.name_id, frame.kind, 0, depth, {}});
    graph_.nodes[parent].children.push_back(it->second);
  }
  return it->second;
}

void TreeBuilder::Reserve() {
  size_t locations = 1;
  for (const StackSample& stack : aggregation_.stacks) locations += stack.locations.size();
  graph_.nodes.reserve(locations);
}

// Stacks are leaf first; the tree grows from the root.
void TreeBuilder::AddStack(const StackSample& stack) {
  if (graph_.is_diff) return AddDiffStack(stack);
  if (!(stack.value > 0)) {
    ++graph_.negative_stacks;
    return;
  }
  graph_.nodes[kRootNode].value += stack.value;
  uint32_t node = kRootNode;
  for (size_t i = stack.locations.size(); i-- > 0;) {
    for (const LocationFrame& frame : FramesOf(stack.locations[i])) {
      node = Child(node, frame);
      graph_.nodes[node].value += stack.value;
    }
  }
}

// Like AddStack, but every stack counts: its change and base go to every
// frame on its path, and its change is the leaf's own (see SetDiffWidths).
void TreeBuilder::AddDiffStack(const StackSample& stack) {
  uint32_t node = kRootNode;
  auto add = [&](uint32_t to) {
    graph_.changes.resize(graph_.nodes.size());
    graph_.changes[to].change += stack.value;
    graph_.changes[to].base += stack.base;
  };
  add(node);
  for (size_t i = stack.locations.size(); i-- > 0;) {
    for (const LocationFrame& frame : FramesOf(stack.locations[i])) {
      node = Child(node, frame);
      add(node);
    }
  }
  own_change_.resize(graph_.nodes.size(), 0);
  own_change_[node] += stack.value;
}

// Width = |own change| + the callees' widths, from the last node back:
// a callee is always created after its caller, so it is done first.
void TreeBuilder::SetDiffWidths() {
  own_change_.resize(graph_.nodes.size(), 0);
  graph_.changes.resize(graph_.nodes.size());
  for (size_t n = graph_.nodes.size(); n-- > 0;) {
    FlameNode& node = graph_.nodes[n];
    node.value = std::fabs(own_change_[n]);
    for (uint32_t child : node.children) node.value += graph_.nodes[child].value;
  }
}

// Widest first puts the biggest consumers at the left edge, where the eye
// starts; names break ties so the output never depends on hash order.
FlameGraph TreeBuilder::Finish() {
  if (graph_.is_diff) SetDiffWidths();
  const std::vector<FlameNode>& nodes = graph_.nodes;
  const std::vector<std::string>& names = graph_.names;
  for (FlameNode& node : graph_.nodes) {
    std::sort(node.children.begin(), node.children.end(), [&](uint32_t a, uint32_t b) {
      if (nodes[a].value != nodes[b].value) return nodes[a].value > nodes[b].value;
      return names[nodes[a].name_id] < names[nodes[b].name_id];
    });
  }
  return std::move(graph_);
}

}  // namespace

FrameKind ClassifyFrame(const Frame& frame) {
  const std::string& function = frame.function;
  // The allocator's and libc's frames stay runtime even unresolved (their
  // libraries seldom ship symbols): that they are not the program's code
  // matters more than that they have no name.
  if (StartsWithAny(frame.module, kRuntimeModules)) return FrameKind::kRuntime;
  // The libdwfl symbolizer names what it cannot resolve "module+0xoffset".
  if (function.empty() || function == "??") return FrameKind::kUnknown;
  if (!frame.module.empty() && function.starts_with(frame.module + "+0x"))
    return FrameKind::kUnknown;
  if (StartsWithAny(function, kRuntimeNamePrefixes)) return FrameKind::kRuntime;
  return FrameKind::kApp;
}

FlameGraph BuildFlameGraph(const Aggregation& aggregation) {
  TreeBuilder builder(aggregation);
  builder.Reserve();
  for (const StackSample& stack : aggregation.stacks) builder.AddStack(stack);
  return builder.Finish();
}

}  // namespace memprof::analysis
