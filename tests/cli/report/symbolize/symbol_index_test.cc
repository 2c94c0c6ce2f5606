#include "cli/report/symbolize/symbol_index.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace memprof::report::symbolize {
namespace {

// `name` is a literal: the index keeps a pointer to it.
IndexedSymbol Sym(const char* name, uint64_t start, uint64_t size, int binding = 3,
                  uint32_t order = 0) {
  IndexedSymbol symbol;
  symbol.name = name;
  symbol.start = start;
  symbol.size = size;
  symbol.binding_rank = binding;
  symbol.order = order;
  return symbol;
}

IndexedSymbol Label(const char* name, uint64_t start, uint64_t section_start,
                    uint64_t section_end) {
  IndexedSymbol symbol = Sym(name, start, 0);
  symbol.section_start = section_start;
  symbol.section_end = section_end;
  return symbol;
}

std::string NameAt(SymbolIndex& index, uint64_t address) {
  const auto name = index.Find(address);
  return name ? std::string(*name) : "<none>";
}

TEST(SymbolIndexTest, FindsTheSymbolThatContainsTheAddress) {
  SymbolIndex index = SymbolIndex::FromSymbols({Sym("b", 0x2000, 0x10), Sym("a", 0x1000, 0x100)});
  EXPECT_EQ(NameAt(index, 0x1000), "a");
  EXPECT_EQ(NameAt(index, 0x10ff), "a");
  EXPECT_EQ(NameAt(index, 0x1100), "<none>");  // one past the end
  EXPECT_EQ(NameAt(index, 0x2008), "b");
  EXPECT_EQ(NameAt(index, 0xfff), "<none>");
  EXPECT_EQ(NameAt(index, 0x3000), "<none>");
}

TEST(SymbolIndexTest, NestedSymbolsPreferTheClosestStart) {
  SymbolIndex index = SymbolIndex::FromSymbols(
      {Sym("outer", 0x1000, 0x1000), Sym("inner", 0x1400, 0x100), Sym("after", 0x1800, 0x10)});
  EXPECT_EQ(NameAt(index, 0x1450), "inner");
  EXPECT_EQ(NameAt(index, 0x1500), "outer");  // past inner, still inside outer
  EXPECT_EQ(NameAt(index, 0x1808), "after");
  EXPECT_EQ(NameAt(index, 0x1900), "outer");  // walks down past two non-containing symbols
}

TEST(SymbolIndexTest, AliasesPreferGlobalThenSmallerThenFirst) {
  SymbolIndex by_binding =
      SymbolIndex::FromSymbols({Sym("local", 0x1000, 0x10, 1, 1), Sym("global", 0x1000, 0x10, 3, 2),
                                Sym("weak", 0x1000, 0x10, 2, 3)});
  EXPECT_EQ(NameAt(by_binding, 0x1004), "global");
  SymbolIndex by_size =
      SymbolIndex::FromSymbols({Sym("big", 0x1000, 0x20, 3, 1), Sym("small", 0x1000, 0x10, 3, 2)});
  EXPECT_EQ(NameAt(by_size, 0x1004), "small");
  EXPECT_EQ(NameAt(by_size, 0x1018), "big");  // only the big one reaches it
  SymbolIndex by_order = SymbolIndex::FromSymbols(
      {Sym("second", 0x1000, 0x10, 3, 7), Sym("first", 0x1000, 0x10, 3, 4)});
  EXPECT_EQ(NameAt(by_order, 0x1004), "first");
}

TEST(SymbolIndexTest, SizelessLabelNamesWhatFollowsItInItsSection) {
  SymbolIndex index = SymbolIndex::FromSymbols({Label("asm_entry", 0x1000, 0x1000, 0x3000),
                                                Sym("func", 0x1800, 0x100),
                                                Label("other_section", 0x3000, 0x3000, 0x4000)});
  EXPECT_EQ(NameAt(index, 0x1100), "asm_entry");
  EXPECT_EQ(NameAt(index, 0x1850), "func");  // a sized symbol wins
  // func ends between the label and the address: the label is not its name.
  EXPECT_EQ(NameAt(index, 0x2000), "<none>");
  EXPECT_EQ(NameAt(index, 0x3004), "other_section");
  EXPECT_EQ(NameAt(index, 0x4004), "<none>");  // outside the label's section
}

TEST(SymbolIndexTest, AbsoluteSizelessSymbolMatchesOnlyItsOwnAddress) {
  SymbolIndex index = SymbolIndex::FromSymbols({Label("abs", 0x5000, 0x5000, 0x5001)});
  EXPECT_EQ(NameAt(index, 0x5000), "abs");
  EXPECT_EQ(NameAt(index, 0x5001), "<none>");
}

// A name that is empty though its offset is not 0 (the index tells empty
// names by the offset, without reading them): never what an address is named.
TEST(SymbolIndexTest, AnEmptyNameIsSkippedAsIfItWereNotThere) {
  SymbolIndex index = SymbolIndex::FromSymbols(
      {Sym("outer", 0x1000, 0x1000), Sym("", 0x1400, 0x100), Label("", 0x3000, 0x3000, 0x4000),
       Label("label", 0x2800, 0x2000, 0x4000)});
  EXPECT_EQ(NameAt(index, 0x1450), "outer");
  EXPECT_EQ(NameAt(index, 0x3008), "label");
  const auto nearest = index.FindNearest(0x1450);
  ASSERT_TRUE(nearest.has_value());
  EXPECT_EQ(nearest->name, "outer");
}

TEST(SymbolIndexTest, EmptyIndexFindsNothing) {
  SymbolIndex empty = SymbolIndex::FromSymbols({});
  EXPECT_EQ(NameAt(empty, 0x1000), "<none>");
  EXPECT_EQ(SymbolIndex::Build(nullptr).size(), 0u);
}

// The index must name addresses exactly as dwfl_module_addrinfo does, which
// it replaces. Checked on every module of this test process (the test
// binary, libc, libstdc++, libdw, ...) at addresses spread over each.
struct DwflDeleter {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};

// Return addresses lie in code: compare there (libdwfl also names the
// padding and headers outside every section after whatever symbol its
// section search happens to accept, which no stack ever points into).
std::vector<std::pair<uint64_t, uint64_t>> CodeRanges(Dwfl_Module* module) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  for (Elf_Scn* scn = nullptr; elf != nullptr && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || (header.sh_flags & SHF_EXECINSTR) == 0) continue;
    ranges.emplace_back(header.sh_addr + bias, header.sh_addr + bias + header.sh_size);
  }
  return ranges;
}

int CompareModule(Dwfl_Module* module, void**, const char* name, Dwarf_Addr, void* arg) {
  auto* checked = static_cast<size_t*>(arg);
  SymbolIndex index = SymbolIndex::Build(module);
  for (const auto& [start, end] : CodeRanges(module)) {
    const uint64_t step = std::max<uint64_t>(1, (end - start) / 2000) | 1;  // odd: not aligned
    for (uint64_t address = start; address < end; address += step) {
      GElf_Off offset = 0;
      GElf_Sym symbol;
      const char* expected =
          dwfl_module_addrinfo(module, address, &offset, &symbol, nullptr, nullptr, nullptr);
      const auto found = index.Find(address);
      EXPECT_EQ(found ? std::string(*found) : "<none>", expected ? expected : "<none>")
          << "at 0x" << std::hex << address << " in " << name;
      ++*checked;
    }
  }
  return DWARF_CB_OK;
}

TEST(SymbolIndexTest, AgreesWithDwflModuleAddrinfoOnThisProcess) {
  static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf,
                                           dwfl_standard_find_debuginfo, nullptr, nullptr};
  std::unique_ptr<Dwfl, DwflDeleter> dwfl(dwfl_begin(&callbacks));
  ASSERT_NE(dwfl, nullptr);
  ASSERT_EQ(dwfl_linux_proc_report(dwfl.get(), getpid()), 0);
  ASSERT_EQ(dwfl_report_end(dwfl.get(), nullptr, nullptr), 0);
  size_t checked = 0;
  dwfl_getmodules(dwfl.get(), CompareModule, &checked, 0);
  EXPECT_GT(checked, 10000u);
}

// --nearest-symbol: jeprof's guess for an address past every symbol's end
// (a static function after an exported one in a stripped library).
TEST(SymbolIndexTest, NearestIsTheClosestStartBelowCoveringOrNot) {
  SymbolIndex index =
      SymbolIndex::FromSymbols({Sym("exported", 0x1000, 0x20), Sym("later", 0x2000, 0x10),
                                Label("label", 0x1800, 0x1000, 0x3000)});
  EXPECT_FALSE(index.Find(0x1100).has_value());
  ASSERT_TRUE(index.FindNearest(0x1100).has_value());
  EXPECT_EQ(index.FindNearest(0x1100)->name, "exported");
  EXPECT_EQ(index.FindNearest(0x1100)->start, 0x1000u);
  // A sizeless label closer below wins over a sized symbol further down.
  EXPECT_EQ(index.FindNearest(0x1900)->name, "label");
  EXPECT_EQ(index.FindNearest(0x2008)->name, "later");
  EXPECT_FALSE(index.FindNearest(0xfff).has_value());
}

}  // namespace
}  // namespace memprof::report::symbolize
