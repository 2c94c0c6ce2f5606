#include "cli/report/symbolize/symbol_index.h"

#include <gelf.h>

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

namespace memprof::report::symbolize {
namespace {

int BindingRank(unsigned char info) {
  switch (GELF_ST_BIND(info)) {
    case STB_GLOBAL:
      return 3;
    case STB_WEAK:
      return 2;
    case STB_LOCAL:
      return 1;
    default:
      return 0;
  }
}

// Whether libdwfl would ever name an address after this symbol. An empty
// name is told by its offset, 0, where every string table starts with the
// empty string: reading the name itself would touch the string table at
// random, a page fault for most of libLLVM's 45,000 symbols. (A linker that
// pointed an empty name at the end of another string would slip one
// through; Find skips it.)
bool IsNamingSymbol(const char* name, const GElf_Sym& symbol, GElf_Word section) {
  if (name == nullptr || symbol.st_name == 0 || section == SHN_UNDEF) return false;
  const int type = GELF_ST_TYPE(symbol.st_info);
  return type != STT_SECTION && type != STT_FILE && type != STT_TLS;
}

// The module-relative range of the section a sizeless symbol lies in.
std::pair<uint64_t, uint64_t> SectionRange(Elf* elf, GElf_Word section, Dwarf_Addr bias,
                                           uint64_t start) {
  if (section >= SHN_LORESERVE) return {start, start + 1};  // absolute: exact match only
  GElf_Shdr header;
  Elf_Scn* scn = elf != nullptr ? elf_getscn(elf, section) : nullptr;
  if (scn == nullptr || gelf_getshdr(scn, &header) == nullptr) return {start, start + 1};
  return {header.sh_addr + bias, header.sh_addr + bias + header.sh_size};
}

// Sort order: by start; among equal starts the preferred symbol last, so a
// downward walk meets it first. A lambda rather than a function, so that
// std::sort inlines it (libLLVM's 45,000 symbols).
constexpr auto kLessPreferred = [](const IndexedSymbol& a, const IndexedSymbol& b) {
  // Preference: higher binding, then smaller size, then earlier in the table.
  return std::tuple(a.start, a.binding_rank, b.size, b.order) <
         std::tuple(b.start, b.binding_rank, a.size, a.order);
};

// Index of the last symbol starting at or below `address`, or -1.
ptrdiff_t LastAtOrBelow(const std::vector<IndexedSymbol>& symbols, uint64_t address) {
  auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                             [](uint64_t a, const IndexedSymbol& s) { return a < s.start; });
  return (it - symbols.begin()) - 1;
}

}  // namespace

SymbolIndex SymbolIndex::Build(Dwfl_Module* module) {
  std::vector<IndexedSymbol> symbols;
  const int count = module != nullptr ? dwfl_module_getsymtab(module) : -1;
  // Sized once: libLLVM has 45,000 symbols, and growing by doubling touched
  // twice the memory, which costs more than the reading.
  if (count > 1) symbols.reserve(static_cast<size_t>(count - 1));
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word section = SHN_UNDEF;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name =
        dwfl_module_getsym_info(module, i, &symbol, &address, &section, &elf, &bias);
    if (!IsNamingSymbol(name, symbol, section)) continue;
    IndexedSymbol& indexed = symbols.emplace_back();
    indexed.start = address;
    indexed.size = symbol.st_size;
    indexed.binding_rank = BindingRank(symbol.st_info);
    indexed.order = static_cast<uint32_t>(i);
    indexed.name = name;
    if (indexed.size == 0) {
      std::tie(indexed.section_start, indexed.section_end) =
          SectionRange(elf, section, bias, address);
    }
  }
  return FromSymbols(std::move(symbols));
}

SymbolIndex SymbolIndex::FromSymbols(std::vector<IndexedSymbol> symbols) {
  SymbolIndex index;
  // Split in place: the sized symbols (nearly all) keep the vector.
  auto sizeless = std::partition(symbols.begin(), symbols.end(),
                                  [](const IndexedSymbol& s) { return s.size != 0; });
  index.sizeless_.assign(std::make_move_iterator(sizeless), std::make_move_iterator(symbols.end()));
  symbols.erase(sizeless, symbols.end());
  index.sized_ = std::move(symbols);
  std::sort(index.sized_.begin(), index.sized_.end(), kLessPreferred);
  std::sort(index.sizeless_.begin(), index.sizeless_.end(), kLessPreferred);
  uint64_t max_end = 0;
  index.max_end_.reserve(index.sized_.size());
  for (const IndexedSymbol& symbol : index.sized_) {
    max_end = std::max(max_end, symbol.start + symbol.size);
    index.max_end_.push_back(max_end);
  }
  return index;
}

std::optional<std::string_view> SymbolIndex::Find(uint64_t address) const {
  const IndexedSymbol* found = FindSized(address);
  if (found == nullptr) found = FindSizeless(address);
  if (found == nullptr) return std::nullopt;
  return found->name;
}

std::optional<SymbolIndex::Nearest> SymbolIndex::FindNearest(uint64_t address) const {
  const IndexedSymbol* best = nullptr;
  for (const std::vector<IndexedSymbol>* symbols : {&sized_, &sizeless_}) {
    ptrdiff_t i = LastAtOrBelow(*symbols, address);
    while (i >= 0 && (*symbols)[i].name[0] == '\0') --i;
    if (i >= 0 && (best == nullptr || (*symbols)[i].start > best->start)) best = &(*symbols)[i];
  }
  if (best == nullptr) return std::nullopt;
  return Nearest{best->name, best->start};
}

const IndexedSymbol* SymbolIndex::FindSized(uint64_t address) const {
  // Walking down from the closest start, max_end_ says when no symbol
  // further down can still reach the address.
  for (ptrdiff_t i = LastAtOrBelow(sized_, address); i >= 0 && max_end_[i] > address; --i) {
    const IndexedSymbol& symbol = sized_[i];
    if (address - symbol.start < symbol.size && symbol.name[0] != '\0') return &symbol;
  }
  return nullptr;
}

const IndexedSymbol* SymbolIndex::FindSizeless(uint64_t address) const {
  const uint64_t lowest = LowestLabel(address);
  for (ptrdiff_t i = LastAtOrBelow(sizeless_, address); i >= 0 && sizeless_[i].start >= lowest;
       --i) {
    const IndexedSymbol& symbol = sizeless_[i];
    if (address >= symbol.section_start && address < symbol.section_end &&
        symbol.name[0] != '\0') {
      return &symbol;
    }
  }
  return nullptr;
}

uint64_t SymbolIndex::LowestLabel(uint64_t address) const {
  // Only called when no sized symbol contains the address, so every sized
  // symbol starting at or below it also ends at or below it.
  const ptrdiff_t last = LastAtOrBelow(sized_, address);
  return last >= 0 ? max_end_[last] : 0;
}

}  // namespace memprof::report::symbolize
