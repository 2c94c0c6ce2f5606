#include "cli/report/symbolize/cu_function_index.h"

#include <dwarf.h>

#include <algorithm>

namespace memprof::report::symbolize {
namespace {

// How far FindRoot looks back past subprograms that start before `pc` but
// end before it; only nested subprograms (GNU C nested functions) overlap.
constexpr int kMaxRootScan = 64;

std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> Ranges(Dwarf_Die* die) {
  std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> ranges;
  Dwarf_Addr base = 0;
  Dwarf_Addr low = 0;
  Dwarf_Addr high = 0;
  for (ptrdiff_t offset = 0; (offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0;) {
    if (low < high) ranges.emplace_back(low, high);
  }
  return ranges;
}

}  // namespace

bool CuFunctionIndex::Node::Contains(Dwarf_Addr pc) const {
  return std::any_of(ranges.begin(), ranges.end(),
                     [pc](const auto& range) { return pc >= range.first && pc < range.second; });
}

CuFunctionIndex::CuFunctionIndex(Dwarf_Die cu_die) : cu_die_(cu_die) {
  Walk(&cu_die_, -1);
  std::sort(roots_.begin(), roots_.end(),
            [](const RootRange& a, const RootRange& b) { return a.low < b.low; });
}

// Visits every DIE once. Functions with code become nodes; everything else
// (namespaces, classes, lexical blocks) is only looked through, because
// functions nest inside them.
void CuFunctionIndex::Walk(Dwarf_Die* parent_die, int parent_node) {
  Dwarf_Die child;
  if (dwarf_child(parent_die, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    int node = parent_node;
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      const int added = AddNode(&child, tag == DW_TAG_subprogram ? -1 : parent_node);
      if (added >= 0) node = added;
    }
    if (dwarf_haschildren(&child)) Walk(&child, node);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// Subprograms with code are roots: a frame chain ends at the out-of-line
// function even when its DIE nests in another one. Inlined instances hang
// below the function they were inlined into.
int CuFunctionIndex::AddNode(Dwarf_Die* die, int parent_node) {
  std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> ranges = Ranges(die);
  if (ranges.empty()) return -1;  // declaration or abstract instance: no code
  const int index = static_cast<int>(nodes_.size());
  if (parent_node < 0) {
    for (const auto& [low, high] : ranges) roots_.push_back({low, high, index});
  } else {
    nodes_[static_cast<size_t>(parent_node)].inlined_children.push_back(index);
  }
  nodes_.push_back(Node{*die, parent_node, std::move(ranges), {}});
  return index;
}

int CuFunctionIndex::FindRoot(Dwarf_Addr pc) const {
  auto it = std::upper_bound(roots_.begin(), roots_.end(), pc,
                             [](Dwarf_Addr a, const RootRange& r) { return a < r.low; });
  for (int scanned = 0; it != roots_.begin() && scanned < kMaxRootScan; ++scanned) {
    --it;
    if (pc < it->high) return it->node;
  }
  return -1;
}

std::vector<int> CuFunctionIndex::Chain(Dwarf_Addr pc) const {
  std::vector<int> outwards;
  for (int current = FindRoot(pc); current >= 0;) {
    outwards.push_back(current);
    const std::vector<int>& children = node(current).inlined_children;
    auto inner = std::find_if(children.begin(), children.end(),
                              [&](int child) { return node(child).Contains(pc); });
    current = inner == children.end() ? -1 : *inner;
  }
  std::reverse(outwards.begin(), outwards.end());
  return outwards;
}

}  // namespace memprof::report::symbolize
