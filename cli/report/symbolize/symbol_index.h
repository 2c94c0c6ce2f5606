#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_H_

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace memprof::report::symbolize {

// One ELF symbol as FromSymbols takes it: run-time addresses, the name
// NUL-terminated and owned by the caller.
struct IndexedSymbol {
  uint64_t start = 0;
  uint64_t size = 0;
  int binding_rank = 0;  // global 3 > weak 2 > local 1 > other 0
  uint32_t order = 0;    // position in the symbol table: first found wins ties
  const char* name = "";
  // Sizeless symbols only: the range of their section, which the looked-up
  // address must share ([start, start+1) for SHN_ABS and the other reserved
  // sections: only their own address).
  uint64_t section_start = 0;
  uint64_t section_end = 0;
};

// One symbol as the index keeps it, in memory and in its cache file
// (symbol_index_cache.h): addresses as the ELF file has them, without the
// module's load bias, so that one file serves every process that maps the
// module; no name, which is read from the symbol table (`order`) only for
// the symbols a lookup finds.
struct IndexEntry {
  uint64_t start = 0;
  uint64_t size = 0;  // 0: a sizeless symbol (an assembly label)
  // Sized: the largest end of this entry and every sized entry before it.
  // Sizeless: the start of its section's range.
  uint64_t reach = 0;
  uint64_t section_end = 0;  // sizeless: the end of that range
  uint32_t order = 0;        // its index in the module's symbol table
  uint32_t binding_rank = 0;
};
static_assert(sizeof(IndexEntry) == 40, "the cache file's layout");

// The symbol table of one module (.symtab, else .dynsym), sorted once so that
// each lookup is a binary search. dwfl_module_addrinfo scans every symbol on
// every call, which for a library like libLLVM (tens of thousands of symbols)
// and thousands of distinct PCs made symbolization the cost of a report.
// Sorting libLLVM's and libclang-cpp's tables took 15 ms of a report, so an
// index is kept in the symbol index cache (symbol_index_cache.h) once built.
//
// Lookup follows dwfl_module_addrinfo's choice: the sized symbol containing
// the address that starts closest below it (ties: global over weak over
// local, then the smaller one, then the first in the table); failing that,
// the closest sizeless symbol (an assembly label) in the address's section
// that no sized symbol's end lies between.
//
// Not thread-safe: a lookup may replace an index read from the cache whose
// entries turn out not to be the module's.
class SymbolIndex {
 public:
  SymbolIndex() = default;
  SymbolIndex(SymbolIndex&&) noexcept = default;
  SymbolIndex& operator=(SymbolIndex&&) noexcept = default;
  SymbolIndex(const SymbolIndex&) = delete;
  SymbolIndex& operator=(const SymbolIndex&) = delete;

  // The index of `module`'s symbol table: from the cache when it has one for
  // the module's build ID, else read (and then cached). An index of a
  // module without a symbol table is empty and finds nothing.
  static SymbolIndex Build(Dwfl_Module* module);
  // Builds from symbols already read (the unit tests' entry point).
  static SymbolIndex FromSymbols(std::vector<IndexedSymbol> symbols);

  // The symbol's name (mangled, as in the table), or nullopt.
  std::optional<std::string_view> Find(uint64_t address);
  // The symbol that starts closest at or below `address`, whether or not it
  // covers it: jeprof's way of naming every address of a stripped library,
  // a guess when Find() has nothing (a static function after an exported
  // one takes the exported one's name).
  struct Nearest {
    std::string_view name;
    uint64_t start = 0;
  };
  std::optional<Nearest> FindNearest(uint64_t address);
  size_t size() const { return sized_.size() + sizeless_.size(); }
  // Whether the entries came from the cache (the tests' question).
  bool from_cache() const { return mapping_ != nullptr; }

 private:
  // Reads and sorts `module`'s symbol table.
  static SymbolIndex Read(Dwfl_Module* module, int count, uint64_t bias);
  // Sorts `entries` (names[i] the name of entries[i] when `names` is not
  // empty) into sized_ and sizeless_.
  void Sort(std::vector<IndexEntry> entries, std::vector<const char*> names);
  // The entry's name, "" for none; nullptr when the entry is not what the
  // module's symbol table has at its position (a cache file gone wrong).
  const char* NameOf(const IndexEntry& entry) const;
  // What a walk over the entries found: the entry and its name (both null
  // for none), or that an entry was not the module's (`wrong`).
  struct Named {
    const IndexEntry* entry = nullptr;
    const char* name = nullptr;
    bool wrong = false;
  };
  template <typename Within, typename Covers>
  Named FirstNamed(std::span<const IndexEntry> entries, uint64_t at, Within within,
                   Covers covers) const;
  // The largest end of a sized symbol that starts at or below `at` and ends
  // at or below it: labels below it are another function's.
  uint64_t LowestLabel(uint64_t at) const;
  // After a cache file proved wrong: the index read afresh (and cached).
  void Rebuild();

  Dwfl_Module* module_ = nullptr;  // where names come from, unless names_ has them
  uint64_t bias_ = 0;              // run-time address = entry address + bias_
  int symbol_count_ = 0;
  std::span<const IndexEntry> sized_;     // by start, then preference
  std::span<const IndexEntry> sizeless_;  // by start, then preference
  std::vector<IndexEntry> owned_;         // what the spans view, when read here
  std::shared_ptr<const void> mapping_;   // what they view, when from the cache
  // FromSymbols only: the names by entry, sized then sizeless; `order` is
  // then the position here.
  std::vector<const char*> names_;
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_H_
