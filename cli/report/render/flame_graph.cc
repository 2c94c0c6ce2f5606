#include "cli/report/render/flame_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "cli/report/aggregate/frame_names.h"

namespace memprof::report::render {
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

// Stacks [begin, end) of the builder's order, all through `node` at `depth`.
struct Group {
  size_t begin;
  size_t end;
  uint32_t depth;
  uint32_t node;
};

// What one thread regrouping stacks needs: GroupByName's counting sort
// (per name, its rank in the group being split, valid where stamp is the
// current one; per stack, its name's rank) and room for the stable moves.
struct Scratch {
  void Reset(size_t names) {
    name_rank.assign(names, 0);
    name_stamp.assign(names, 0);
    stamp = 0;
  }
  std::vector<uint32_t> stacks;
  std::vector<uint32_t> name_rank;
  std::vector<uint32_t> name_stamp;
  uint32_t stamp = 0;
  std::vector<uint32_t> ranks;
  std::vector<uint32_t> counts;
};

// Counts the nodes below each frame too narrow to draw, on a thread of its
// own while the tree grows (with one core, at once on the caller's): the
// count walks the frame's stacks as the tree would, a third of a big
// graph's building, and only the number is kept.
class NarrowCounter {
 public:
  using Count = std::function<size_t(const Group&, Scratch&)>;
  using Counted = std::vector<std::pair<uint32_t, size_t>>;  // node, nodes below it

  ~NarrowCounter() { (void)Finish(); }
  void Start(size_t names, Count count) {
    scratch_.Reset(names);
    count_ = std::move(count);
    if (std::thread::hardware_concurrency() >= 2) thread_ = std::jthread([this] { Run(); });
  }
  void Add(const Group& group) {
    if (!thread_.joinable()) {
      counted_.emplace_back(group.node, count_(group, scratch_));
      return;
    }
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(group);
    }
    changed_.notify_one();
  }
  // Waits for every count.
  Counted Finish() {
    if (thread_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        finishing_ = true;
      }
      changed_.notify_one();
      thread_.join();
    }
    return std::move(counted_);
  }

 private:
  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return next_ < queue_.size() || finishing_; });
      if (next_ == queue_.size()) return;  // finishing, and nothing left
      const Group group = queue_[next_++];
      lock.unlock();
      const size_t below = count_(group, scratch_);
      lock.lock();
      counted_.emplace_back(group.node, below);
    }
  }

  Count count_;
  Scratch scratch_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Group> queue_;
  size_t next_ = 0;
  bool finishing_ = false;
  Counted counted_;
  std::jthread thread_;
};

// Builds the tree top down: the stacks through a node, kept in the
// profile's order, are grouped by their next frame's name, and each group
// is a child. So a node's value is its stacks' values summed in the
// profile's order (the sums are those of adding the stacks one by one), its
// kind is that of the first stack through it, and its children are created
// side by side, in the order the profile first reaches them.
class TreeBuilder {
 public:
  TreeBuilder(const aggregate::Aggregation& aggregation, double min_fraction);
  FlameGraph Build();

 private:
  uint32_t NameId(std::string name);
  std::span<const LocationFrame> FramesOf(uint32_t location);
  void ExpandPaths();
  size_t Length(uint32_t stack) const { return starts_[stack + 1] - starts_[stack]; }
  uint32_t NameAt(uint32_t stack, uint32_t depth) const {
    return path_names_[starts_[stack] + depth];
  }
  void AddToNode(uint32_t node, size_t begin, size_t end);
  size_t EndStacksAt(const Group& group, Scratch& scratch);
  void GroupByName(size_t begin, size_t end, uint32_t depth, Scratch& scratch);
  size_t RunEnd(size_t run, size_t end, uint32_t depth) const;
  size_t SharedLength(size_t begin, size_t end, uint32_t depth) const;
  void CopyValue(uint32_t from, uint32_t to);
  void MakeShared(const Group& group, size_t levels, std::vector<Group>& todo);
  uint32_t AddChild(uint32_t parent, uint32_t name, FrameKind kind, uint32_t depth);
  void Split(const Group& group, std::vector<Group>& todo);
  bool TooNarrow(uint32_t node) const;
  void LeaveUnmade(const Group& group);
  size_t CountBelow(const Group& group, Scratch& scratch);
  void Chain(const Group& group);
  void GrowTree();
  void SetDiffWidths();
  void SortChildren();

  const aggregate::Aggregation& aggregation_;
  const double min_fraction_;  // 0: make every node
  double min_value_ = 0;       // nodes narrower than this get no callees
  FlameGraph graph_;           // graph_.names: the interned names
  std::unordered_map<std::string, uint32_t> name_ids_;
  // Per location, where its frames are in frames_, made at its first use
  // (kUnmade before). One flat array: ExpandPaths reads a location's frames
  // for each of the profile's million frames, and a vector per location
  // made each read a chase through a heap block of its own.
  struct FrameRun {
    uint32_t first;
    uint32_t count;
  };
  static constexpr uint32_t kUnmade = UINT32_MAX;
  std::vector<FrameRun> location_frames_;
  std::vector<LocationFrame> frames_;
  // The drawn stacks (all in a diff, the positive ones otherwise): their
  // values side by side (the tree sums them over and over), and each as its
  // frames root first, back to back: stack i is [starts_[i], starts_[i + 1]).
  struct StackValue {
    double value;
    double base;
  };
  std::vector<StackValue> drawn_;
  std::vector<uint32_t> path_names_;
  std::vector<FrameKind> path_kinds_;
  std::vector<size_t> starts_;
  std::vector<uint32_t> order_;     // the drawn stacks, grouped node by node
  Scratch scratch_;                 // the building thread's
  NarrowCounter narrow_;            // counts below the frames too narrow to draw
  std::vector<double> own_change_;  // a diff: per node, the change of stacks ending there
};

TreeBuilder::TreeBuilder(const aggregate::Aggregation& aggregation, double min_fraction)
    : aggregation_(aggregation),
      min_fraction_(aggregation.is_diff ? 0 : std::max(min_fraction, 0.0)),
      location_frames_(aggregation.locations.size(), FrameRun{kUnmade, 0}) {
  graph_.metric = aggregation.metric;
  graph_.profile_total = aggregation.total;
  graph_.is_diff = aggregation.is_diff;
  graph_.base_total = aggregation.total_base;
  graph_.nodes.push_back({NameId("all"), FrameKind::kRoot, 0, 0, 0, 0});
  if (min_fraction_ > 0) graph_.unmade.push_back(0);
}

uint32_t TreeBuilder::NameId(std::string name) {
  auto [it, inserted] =
      name_ids_.emplace(std::move(name), static_cast<uint32_t>(graph_.names.size()));
  if (inserted) graph_.names.push_back(it->first);
  return it->second;
}

// Each inline frame is classified on its own, so a std:: helper inlined
// into the program's code still reads as runtime.
std::span<const LocationFrame> TreeBuilder::FramesOf(uint32_t location) {
  FrameRun& run = location_frames_[location];
  if (run.first == kUnmade) {
    const aggregate::Location& source = aggregation_.locations[location];
    std::vector<std::string> names = aggregate::RootFirstFrameNames(source, aggregation_.lines);
    run = {static_cast<uint32_t>(frames_.size()), static_cast<uint32_t>(names.size())};
    for (size_t i = 0; i < names.size(); ++i) {
      const aggregate::Frame& frame = source.frames[source.frames.size() - 1 - i];
      frames_.push_back({NameId(std::move(names[i])), ClassifyFrame(frame)});
    }
  }
  return {frames_.data() + run.first, run.count};
}

// Stacks are leaf first; paths are root first. A stack with no positive
// value has no width to draw, except in a diff, where every change counts.
// A location's frames are made at its first use, in the order the paths
// reach them. One pass over the stacks (a second costs as much as the copy):
// the arrays are sized for one frame per location and an inline frame in
// eight, so only a profile richer in inline frames than that grows them.
void TreeBuilder::ExpandPaths() {
  size_t locations = 0;
  for (const aggregate::StackSample& stack : aggregation_.stacks)
    locations += stack.locations.size();
  path_names_.reserve(locations + locations / 8);
  path_kinds_.reserve(locations + locations / 8);
  starts_.reserve(aggregation_.stacks.size() + 1);
  starts_.push_back(0);
  for (const aggregate::StackSample& stack : aggregation_.stacks) {
    if (!graph_.is_diff && !(stack.value > 0)) {
      ++graph_.negative_stacks;
      continue;
    }
    drawn_.push_back({stack.value, stack.base});
    for (size_t l = stack.locations.size(); l-- > 0;) {
      for (const LocationFrame& frame : FramesOf(stack.locations[l])) {
        path_names_.push_back(frame.name_id);
        path_kinds_.push_back(frame.kind);
      }
    }
    starts_.push_back(path_names_.size());
  }
  // As many nodes as frames at most: pages of it never used are never touched.
  graph_.nodes.reserve(path_names_.size() + 1);
}

// The stacks through `node`, in the profile's order.
void TreeBuilder::AddToNode(uint32_t node, size_t begin, size_t end) {
  if (!graph_.is_diff) {
    double& value = graph_.nodes[node].value;
    for (size_t i = begin; i < end; ++i) value += drawn_[order_[i]].value;
    return;
  }
  FrameChange& change = graph_.changes[node];
  for (size_t i = begin; i < end; ++i) {
    change.change += drawn_[order_[i]].value;
    change.base += drawn_[order_[i]].base;
  }
}

// Moves the group's stacks that end at its node to its front, both parts
// in their order; returns where the others begin.
size_t TreeBuilder::EndStacksAt(const Group& group, Scratch& scratch) {
  auto ends = [&](uint32_t stack) { return Length(stack) == group.depth; };
  const auto first = order_.begin() + static_cast<ptrdiff_t>(group.begin);
  const auto last = order_.begin() + static_cast<ptrdiff_t>(group.end);
  if (std::none_of(first, last, ends)) return group.begin;
  scratch.stacks.clear();
  auto out = first;
  for (auto it = first; it != last; ++it) {
    if (ends(*it)) {
      *out++ = *it;
    } else {
      scratch.stacks.push_back(*it);
    }
  }
  std::copy(scratch.stacks.begin(), scratch.stacks.end(), out);
  const size_t split = static_cast<size_t>(out - order_.begin());
  if (graph_.is_diff) {
    double& own = own_change_[group.node];
    for (size_t i = group.begin; i < split; ++i) own += drawn_[order_[i]].value;
  }
  return split;
}

// Reorders stacks [begin, end) of order_ so that those with the same name
// at `depth` are together, the groups in the order of their first stack,
// each in its stacks' order (a counting sort by the name's rank).
void TreeBuilder::GroupByName(size_t begin, size_t end, uint32_t depth, Scratch& scratch) {
  ++scratch.stamp;
  scratch.ranks.clear();
  scratch.counts.clear();
  for (size_t i = begin; i < end; ++i) {
    const uint32_t name = NameAt(order_[i], depth);
    if (scratch.name_stamp[name] != scratch.stamp) {
      scratch.name_stamp[name] = scratch.stamp;
      scratch.name_rank[name] = static_cast<uint32_t>(scratch.counts.size());
      scratch.counts.push_back(0);
    }
    scratch.ranks.push_back(scratch.name_rank[name]);
    ++scratch.counts[scratch.name_rank[name]];
  }
  uint32_t next = 0;
  for (uint32_t& count : scratch.counts) next += std::exchange(count, next);  // where each starts
  scratch.stacks.resize(end - begin);
  for (size_t i = begin; i < end; ++i) {
    scratch.stacks[scratch.counts[scratch.ranks[i - begin]]++] = order_[i];
  }
  std::copy(scratch.stacks.begin(), scratch.stacks.end(),
            order_.begin() + static_cast<ptrdiff_t>(begin));
}

// A new node at `depth`, the next child of `parent`: a parent's children
// are made one after another, so they lie side by side in child_ids.
uint32_t TreeBuilder::AddChild(uint32_t parent, uint32_t name, FrameKind kind, uint32_t depth) {
  const auto child = static_cast<uint32_t>(graph_.nodes.size());
  if (graph_.nodes[parent].child_count == 0) {
    graph_.nodes[parent].first_child = static_cast<uint32_t>(graph_.child_ids.size());
  }
  graph_.nodes.push_back({name, kind, 0, depth, 0, 0});
  if (min_fraction_ > 0) graph_.unmade.push_back(0);
  if (graph_.is_diff) {
    graph_.changes.emplace_back();
    own_change_.push_back(0);
  }
  graph_.child_ids.push_back(child);
  ++graph_.nodes[parent].child_count;
  return child;
}

// Groups the stacks that go on by their next name, keeping each group in
// the profile's order, and makes each group a child, in the order of the
// group's first stack.
void TreeBuilder::Split(const Group& group, std::vector<Group>& todo) {
  if (group.end - group.begin == 1) return Chain(group);
  const size_t begin = EndStacksAt(group, scratch_);
  if (begin == group.end) return;
  const uint32_t depth = group.depth;
  if (const size_t shared = SharedLength(begin, group.end, depth); shared > 0) {
    return MakeShared({begin, group.end, depth, group.node}, shared, todo);
  }
  GroupByName(begin, group.end, depth, scratch_);
  for (size_t run = begin; run < group.end;) {
    const size_t run_end = RunEnd(run, group.end, depth);
    const uint32_t child = AddChild(group.node, NameAt(order_[run], depth),
                                    path_kinds_[starts_[order_[run]] + depth], depth + 1);
    AddToNode(child, run, run_end);
    const Group next{run, run_end, depth + 1, child};
    if (TooNarrow(child)) {
      LeaveUnmade(next);
    } else {
      todo.push_back(next);
    }
    run = run_end;
  }
}

// How many levels from `depth` on all stacks [begin, end) of order_ go on
// through the same frames: they name the same function at each of them, and
// none ends before them. Read along each stack's path, in memory order.
size_t TreeBuilder::SharedLength(size_t begin, size_t end, uint32_t depth) const {
  const uint32_t* first = path_names_.data() + starts_[order_[begin]] + depth;
  size_t shared = Length(order_[begin]) - depth;
  for (size_t i = begin + 1; i < end && shared > 0; ++i) {
    const uint32_t* path = path_names_.data() + starts_[order_[i]] + depth;
    const size_t limit = std::min(shared, Length(order_[i]) - depth);
    size_t level = 0;
    while (level < limit && path[level] == first[level]) ++level;
    shared = level;
  }
  return shared;
}

// Gives node `to` the sums of node `from`, which the same stacks pass through.
void TreeBuilder::CopyValue(uint32_t from, uint32_t to) {
  graph_.nodes[to].value = graph_.nodes[from].value;
  if (graph_.is_diff) graph_.changes[to] = graph_.changes[from];
}

// The `levels` nodes that all of the group's stacks pass through below its
// node, each the only child of the one before: the nodes Split would make
// one level at a time, in the same order and with the same sums, made in
// one go. The group then goes on below the last of them.
void TreeBuilder::MakeShared(const Group& group, size_t levels, std::vector<Group>& todo) {
  const uint32_t stack = order_[group.begin];
  uint32_t node = group.node;
  for (size_t level = 0; level < levels; ++level) {
    const auto depth = static_cast<uint32_t>(group.depth + level);
    const uint32_t parent = node;
    node = AddChild(parent, NameAt(stack, depth), path_kinds_[starts_[stack] + depth], depth + 1);
    if (level == 0) {
      AddToNode(node, group.begin, group.end);
    } else {
      CopyValue(parent, node);
    }
    if (TooNarrow(node)) {
      LeaveUnmade({group.begin, group.end, depth + 1, node});
      return;
    }
  }
  todo.push_back({group.begin, group.end, static_cast<uint32_t>(group.depth + levels), node});
}

// Where the run of stacks from `run` (before `end`) with the same name at
// `depth` ends: after GroupByName, the stacks of one child.
size_t TreeBuilder::RunEnd(size_t run, size_t end, uint32_t depth) const {
  const uint32_t name = NameAt(order_[run], depth);
  size_t run_end = run + 1;
  while (run_end < end && NameAt(order_[run_end], depth) == name) ++run_end;
  return run_end;
}

// A frame the layout cannot draw (flame_layout.h compares the same sums
// against the same product), nor so any of its callees.
bool TreeBuilder::TooNarrow(uint32_t node) const {
  return min_fraction_ > 0 && graph_.nodes[node].value < min_value_;
}

// How many nodes Split would make below the group's node: one per distinct
// name at each depth of each run of stacks, and a lone stack's remaining
// frames. Reorders the group's stacks, which no other node reads.
size_t TreeBuilder::CountBelow(const Group& group, Scratch& scratch) {
  size_t count = 0;
  std::vector<Group> todo = {group};
  while (!todo.empty()) {
    const Group next = todo.back();
    todo.pop_back();
    if (next.end - next.begin == 1) {
      count += Length(order_[next.begin]) - next.depth;
      continue;
    }
    const size_t begin = EndStacksAt(next, scratch);
    if (begin == next.end) continue;
    if (const size_t shared = SharedLength(begin, next.end, next.depth); shared > 0) {
      count += shared;
      todo.push_back({begin, next.end, static_cast<uint32_t>(next.depth + shared), next.node});
      continue;
    }
    GroupByName(begin, next.end, next.depth, scratch);
    for (size_t run = begin; run < next.end;) {
      const size_t run_end = RunEnd(run, next.end, next.depth);
      ++count;
      todo.push_back({run, run_end, next.depth + 1, next.node});
      run = run_end;
    }
  }
  return count;
}

// A group of one stack: the rest of its path is a chain of nodes, each
// the only child of the one before. Made here in one pass along the stack's
// frames, they are the nodes Split would make depth by depth, in the same
// order (a pushed group is the next one split): most of a deep profile's
// frames are in such chains, and this reads them in order.
void TreeBuilder::Chain(const Group& group) {
  const uint32_t stack = order_[group.begin];
  const size_t first = starts_[stack];
  const size_t length = Length(stack);
  uint32_t node = group.node;
  for (size_t depth = group.depth; depth < length; ++depth) {
    node = AddChild(node, path_names_[first + depth], path_kinds_[first + depth],
                    static_cast<uint32_t>(depth + 1));
    AddToNode(node, group.begin, group.end);
  }
  if (graph_.is_diff) own_change_[node] += drawn_[stack].value;  // it ends there
}

void TreeBuilder::GrowTree() {
  scratch_.Reset(graph_.names.size());
  order_.resize(drawn_.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
  if (graph_.is_diff) {
    graph_.changes.emplace_back();
    own_change_.push_back(0);
  }
  AddToNode(kRootNode, 0, order_.size());
  min_value_ = graph_.root().value * min_fraction_;
  if (min_fraction_ > 0) {
    narrow_.Start(graph_.names.size(), [this](const Group& group, Scratch& scratch) {
      return CountBelow(group, scratch);
    });
  }
  std::vector<Group> todo = {{0, order_.size(), 0, kRootNode}};
  while (!todo.empty()) {
    const Group group = todo.back();
    todo.pop_back();
    Split(group, todo);
  }
  for (const auto& [node, count] : narrow_.Finish()) graph_.unmade[node] = count;
}

// A frame too narrow to draw: how many nodes below it were left unmade is
// counted on the counter's thread meanwhile (its stacks are reordered
// there, and no other node reads them).
void TreeBuilder::LeaveUnmade(const Group& group) { narrow_.Add(group); }

// Width = |own change| + the callees' widths, from the last node back:
// a callee is always created after its caller, so it is done first.
void TreeBuilder::SetDiffWidths() {
  for (size_t n = graph_.nodes.size(); n-- > 0;) {
    FlameNode& node = graph_.nodes[n];
    node.value = std::fabs(own_change_[n]);
    for (uint32_t child : graph_.children(node)) node.value += graph_.nodes[child].value;
  }
}

// Widest first puts the biggest consumers at the left edge, where the eye
// starts; names break ties so the output never depends on the build order.
void TreeBuilder::SortChildren() {
  const std::vector<FlameNode>& nodes = graph_.nodes;
  const std::vector<std::string>& names = graph_.names;
  for (const FlameNode& node : graph_.nodes) {
    auto first = graph_.child_ids.begin() + node.first_child;
    std::sort(first, first + node.child_count, [&](uint32_t a, uint32_t b) {
      if (nodes[a].value != nodes[b].value) return nodes[a].value > nodes[b].value;
      return names[nodes[a].name_id] < names[nodes[b].name_id];
    });
  }
}

FlameGraph TreeBuilder::Build() {
  ExpandPaths();
  GrowTree();
  if (graph_.is_diff) SetDiffWidths();
  SortChildren();
  return std::move(graph_);
}

}  // namespace

FrameKind ClassifyFrame(const aggregate::Frame& frame) {
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

void FlameGraph::SetChildren(uint32_t node, std::span<const uint32_t> ids) {
  nodes[node].first_child = static_cast<uint32_t>(child_ids.size());
  nodes[node].child_count = static_cast<uint32_t>(ids.size());
  child_ids.insert(child_ids.end(), ids.begin(), ids.end());
}

FlameGraph BuildFlameGraph(const aggregate::Aggregation& aggregation, double min_fraction) {
  return TreeBuilder(aggregation, min_fraction).Build();
}

}  // namespace memprof::report::render
