#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_H_

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace memprof::report::symbolize {

// One ELF symbol as the index keeps it: module-relative addresses (bias
// applied), the name pointing into the ELF string table libdwfl keeps mapped.
struct IndexedSymbol {
  uint64_t start = 0;
  uint64_t size = 0;
  int binding_rank = 0;  // global 3 > weak 2 > local 1 > other 0
  uint32_t order = 0;    // position in the symbol table: first found wins ties
  // NUL-terminated, in the symbol table: measured only when found, so that
  // building the index reads none of the names.
  const char* name = "";
  // Sizeless symbols only: the module-relative range of their section,
  // which the looked-up address must share ([start, start+1) for SHN_ABS
  // and the other reserved sections: only their own address).
  uint64_t section_start = 0;
  uint64_t section_end = 0;
};

// The symbol table of one module (.symtab, else .dynsym), sorted once so that
// each lookup is a binary search. dwfl_module_addrinfo scans every symbol on
// every call, which for a library like libLLVM (tens of thousands of symbols)
// and thousands of distinct PCs made symbolization the cost of a report.
//
// Lookup follows dwfl_module_addrinfo's choice: the sized symbol containing
// the address that starts closest below it (ties: global over weak over
// local, then the smaller one, then the first in the table); failing that,
// the closest sizeless symbol (an assembly label) in the address's section
// that no sized symbol's end lies between.
class SymbolIndex {
 public:
  // Reads every symbol of `module` once. An index of a module without a
  // symbol table is empty and finds nothing.
  static SymbolIndex Build(Dwfl_Module* module);
  // Builds from symbols already read (the unit tests' entry point).
  static SymbolIndex FromSymbols(std::vector<IndexedSymbol> symbols);

  // The symbol's name (mangled, as in the table), or nullopt.
  std::optional<std::string_view> Find(uint64_t address) const;
  // The symbol that starts closest at or below `address`, whether or not it
  // covers it: jeprof's way of naming every address of a stripped library,
  // a guess when Find() has nothing (a static function after an exported
  // one takes the exported one's name).
  struct Nearest {
    std::string_view name;
    uint64_t start = 0;
  };
  std::optional<Nearest> FindNearest(uint64_t address) const;
  size_t size() const { return sized_.size() + sizeless_.size(); }

 private:
  const IndexedSymbol* FindSized(uint64_t address) const;
  const IndexedSymbol* FindSizeless(uint64_t address) const;
  // The largest end of a sized symbol that starts at or below `address`
  // and ends at or below it: labels below it are another function's.
  uint64_t LowestLabel(uint64_t address) const;

  std::vector<IndexedSymbol> sized_;     // by start, then preference
  std::vector<uint64_t> max_end_;        // running max of sized_[0..i] ends
  std::vector<IndexedSymbol> sizeless_;  // by start, then preference
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_H_
