#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_CU_FUNCTION_INDEX_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_CU_FUNCTION_INDEX_H_

#include <elfutils/libdw.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memprof::report::symbolize {

// The functions of one compilation unit that own code (subprograms with
// ranges, inlined instances) as a tree, for address lookups.
//
// Why not dwarf_getscopes: it walks the whole CU for every address, which
// is milliseconds per lookup in a C++ CU full of template instantiations
// (8 ms on average for memprofctl). This walks the CU once; a lookup is then
// a binary search plus a descent through the nested inlined instances.
// Holds Dwarf_Die copies: valid as long as the Dwarf they came from.
class CuFunctionIndex {
 public:
  struct Node {
    Dwarf_Die die;
    int parent = -1;                                        // enclosing function node
    std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> ranges;  // [low, high)
    std::vector<int> inlined_children;                      // inlined instances directly inside
    bool Contains(Dwarf_Addr pc) const;
  };

  explicit CuFunctionIndex(Dwarf_Die cu_die);

  // Node indices for `pc` (a DWARF address), innermost first: nested
  // inlined instances, then the out-of-line subprogram. Empty if no
  // function of this CU has code at `pc`.
  std::vector<int> Chain(Dwarf_Addr pc) const;

  const Node& node(int index) const { return nodes_[static_cast<size_t>(index)]; }
  const Dwarf_Die& cu_die() const { return cu_die_; }

 private:
  struct RootRange {
    Dwarf_Addr low;
    Dwarf_Addr high;
    int node;
  };

  void Walk(Dwarf_Die* parent_die, int parent_node);
  int AddNode(Dwarf_Die* die, int parent_node);
  int FindRoot(Dwarf_Addr pc) const;

  Dwarf_Die cu_die_;
  std::vector<Node> nodes_;
  std::vector<RootRange> roots_;  // subprogram ranges sorted by low
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_CU_FUNCTION_INDEX_H_
