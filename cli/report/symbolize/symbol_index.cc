#include "cli/report/symbolize/symbol_index.h"

#include <gelf.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "cli/report/symbolize/module_report.h"
#include "cli/report/symbolize/symbol_index_cache.h"

namespace memprof::report::symbolize {
namespace {

uint32_t BindingRank(unsigned char info) {
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
// through; lookups skip it.)
bool IsNamingSymbol(const char* name, const GElf_Sym& symbol, GElf_Word section) {
  if (name == nullptr || symbol.st_name == 0 || section == SHN_UNDEF) return false;
  const int type = GELF_ST_TYPE(symbol.st_info);
  return type != STT_SECTION && type != STT_FILE && type != STT_TLS;
}

// The range of the section a sizeless symbol lies in, in the module's
// addresses less `bias`.
std::pair<uint64_t, uint64_t> SectionRange(Elf* elf, GElf_Word section, Dwarf_Addr elf_bias,
                                           uint64_t bias, uint64_t start) {
  if (section >= SHN_LORESERVE) return {start, start + 1};  // absolute: exact match only
  GElf_Shdr header;
  Elf_Scn* scn = elf != nullptr ? elf_getscn(elf, section) : nullptr;
  if (scn == nullptr || gelf_getshdr(scn, &header) == nullptr) return {start, start + 1};
  const uint64_t section_start = header.sh_addr + elf_bias - bias;
  return {section_start, section_start + header.sh_size};
}

// Sort order: by start; among equal starts the preferred symbol last, so a
// downward walk meets it first. A lambda rather than a function, so that
// std::sort inlines it (libLLVM's 45,000 symbols).
constexpr auto kLessPreferred = [](const IndexEntry& a, const IndexEntry& b) {
  // Preference: higher binding, then smaller size, then earlier in the table.
  return std::tuple(a.start, a.binding_rank, b.size, b.order) <
         std::tuple(b.start, b.binding_rank, a.size, a.order);
};

// Index of the last entry starting at or below `at`, or -1.
ptrdiff_t LastAtOrBelow(std::span<const IndexEntry> entries, uint64_t at) {
  auto it = std::upper_bound(entries.begin(), entries.end(), at,
                             [](uint64_t a, const IndexEntry& e) { return a < e.start; });
  return (it - entries.begin()) - 1;
}

}  // namespace

SymbolIndex SymbolIndex::Build(Dwfl_Module* module) {
  const int count = module != nullptr ? dwfl_module_getsymtab(module) : -1;
  if (count <= 1) return SymbolIndex();
  Dwarf_Addr bias = 0;
  dwfl_module_getelf(module, &bias);
  const std::string build_id = count >= kMinCachedSymbols ? ModuleBuildId(module) : std::string();
  if (!build_id.empty()) {
    if (std::optional<CachedSymbolIndex> cached = ReadCachedSymbolIndex(build_id, count)) {
      SymbolIndex index;
      index.module_ = module;
      index.bias_ = bias;
      index.symbol_count_ = count;
      index.sized_ = cached->sized;
      index.sizeless_ = cached->sizeless;
      index.mapping_ = std::move(cached->mapping);
      return index;
    }
  }
  SymbolIndex index = Read(module, count, bias);
  if (!build_id.empty()) CacheSymbolIndex(build_id, count, index.sized_, index.sizeless_);
  return index;
}

SymbolIndex SymbolIndex::Read(Dwfl_Module* module, int count, uint64_t bias) {
  std::vector<IndexEntry> entries;
  // Sized once: libLLVM has 45,000 symbols, and growing by doubling touched
  // twice the memory, which costs more than the reading.
  entries.reserve(static_cast<size_t>(count - 1));
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word section = SHN_UNDEF;
    Elf* elf = nullptr;
    Dwarf_Addr elf_bias = 0;
    const char* name =
        dwfl_module_getsym_info(module, i, &symbol, &address, &section, &elf, &elf_bias);
    if (!IsNamingSymbol(name, symbol, section)) continue;
    IndexEntry& entry = entries.emplace_back();
    entry.start = address - bias;
    entry.size = symbol.st_size;
    entry.binding_rank = BindingRank(symbol.st_info);
    entry.order = static_cast<uint32_t>(i);
    if (entry.size == 0) {
      std::tie(entry.reach, entry.section_end) =
          SectionRange(elf, section, elf_bias, bias, entry.start);
    }
  }
  SymbolIndex index;
  index.module_ = module;
  index.bias_ = bias;
  index.symbol_count_ = count;
  index.Sort(std::move(entries), {});
  return index;
}

SymbolIndex SymbolIndex::FromSymbols(std::vector<IndexedSymbol> symbols) {
  std::vector<IndexEntry> entries;
  std::vector<const char*> names;
  for (const IndexedSymbol& symbol : symbols) {
    IndexEntry& entry = entries.emplace_back();
    entry.start = symbol.start;
    entry.size = symbol.size;
    entry.binding_rank = static_cast<uint32_t>(symbol.binding_rank);
    entry.order = symbol.order;
    entry.reach = symbol.section_start;
    entry.section_end = symbol.section_end;
    names.push_back(symbol.name);
  }
  SymbolIndex index;
  index.Sort(std::move(entries), std::move(names));
  return index;
}

void SymbolIndex::Sort(std::vector<IndexEntry> entries, std::vector<const char*> names) {
  if (!names.empty()) {
    // Sorted by position, so that the names follow; `order` then becomes
    // the position of the entry's name.
    std::vector<size_t> by(entries.size());
    std::iota(by.begin(), by.end(), 0);
    std::stable_partition(by.begin(), by.end(), [&](size_t i) { return entries[i].size != 0; });
    const auto sized_end =
        std::find_if(by.begin(), by.end(), [&](size_t i) { return entries[i].size == 0; });
    const auto less = [&](size_t a, size_t b) { return kLessPreferred(entries[a], entries[b]); };
    std::sort(by.begin(), sized_end, less);
    std::sort(sized_end, by.end(), less);
    std::vector<IndexEntry> sorted;
    for (size_t i : by) {
      sorted.push_back(entries[i]);
      sorted.back().order = static_cast<uint32_t>(names_.size());
      names_.push_back(names[i]);
    }
    entries = std::move(sorted);
  } else {
    const auto sizeless = std::partition(entries.begin(), entries.end(),
                                         [](const IndexEntry& e) { return e.size != 0; });
    std::sort(entries.begin(), sizeless, kLessPreferred);
    std::sort(sizeless, entries.end(), kLessPreferred);
  }
  const size_t sized_count = static_cast<size_t>(std::count_if(
      entries.begin(), entries.end(), [](const IndexEntry& e) { return e.size != 0; }));
  uint64_t max_end = 0;
  for (size_t i = 0; i < sized_count; ++i) {
    max_end = std::max(max_end, entries[i].start + entries[i].size);
    entries[i].reach = max_end;
  }
  owned_ = std::move(entries);
  sized_ = std::span<const IndexEntry>(owned_).first(sized_count);
  sizeless_ = std::span<const IndexEntry>(owned_).subspan(sized_count);
}

const char* SymbolIndex::NameOf(const IndexEntry& entry) const {
  if (!names_.empty()) return names_[entry.order];
  GElf_Sym symbol;
  GElf_Addr address = 0;
  GElf_Word section = SHN_UNDEF;
  Elf* elf = nullptr;
  Dwarf_Addr elf_bias = 0;
  const char* name = dwfl_module_getsym_info(module_, static_cast<int>(entry.order), &symbol,
                                             &address, &section, &elf, &elf_bias);
  // An entry read here is the table's by construction; one from the cache
  // must prove it.
  if (from_cache() &&
      (name == nullptr || address - bias_ != entry.start || symbol.st_size != entry.size)) {
    return nullptr;
  }
  return name != nullptr ? name : "";
}

// Walks `entries` down from the last one starting at or below `at` while
// `within` holds, and stops at the first that `covers` and has a name.
template <typename Within, typename Covers>
SymbolIndex::Named SymbolIndex::FirstNamed(std::span<const IndexEntry> entries, uint64_t at,
                                           Within within, Covers covers) const {
  for (ptrdiff_t i = LastAtOrBelow(entries, at); i >= 0 && within(entries[i]); --i) {
    if (!covers(entries[i])) continue;
    const char* name = NameOf(entries[i]);
    if (name == nullptr) return {nullptr, nullptr, true};
    if (name[0] != '\0') return {&entries[i], name, false};
  }
  return {};
}

std::optional<std::string_view> SymbolIndex::Find(uint64_t address) {
  const uint64_t at = address - bias_;
  // Walking down from the closest start, `reach` says when no sized symbol
  // further down can still reach the address.
  Named found = FirstNamed(
      sized_, at, [at](const IndexEntry& e) { return e.reach > at; },
      [at](const IndexEntry& e) { return at - e.start < e.size; });
  if (found.entry == nullptr && !found.wrong) {
    const uint64_t lowest = LowestLabel(at);
    found = FirstNamed(
        sizeless_, at, [lowest](const IndexEntry& e) { return e.start >= lowest; },
        [at](const IndexEntry& e) { return at >= e.reach && at < e.section_end; });
  }
  if (found.wrong) {
    Rebuild();
    return Find(address);
  }
  if (found.entry == nullptr) return std::nullopt;
  return std::string_view(found.name);
}

std::optional<SymbolIndex::Nearest> SymbolIndex::FindNearest(uint64_t address) {
  const uint64_t at = address - bias_;
  const auto any = [](const IndexEntry&) { return true; };
  Named best;
  for (std::span<const IndexEntry> entries : {sized_, sizeless_}) {
    const Named found = FirstNamed(entries, at, any, any);
    if (found.wrong) {
      Rebuild();
      return FindNearest(address);
    }
    if (found.entry != nullptr &&
        (best.entry == nullptr || found.entry->start > best.entry->start)) {
      best = found;
    }
  }
  if (best.entry == nullptr) return std::nullopt;
  return Nearest{best.name, best.entry->start + bias_};
}

uint64_t SymbolIndex::LowestLabel(uint64_t at) const {
  // Only called when no sized symbol contains the address, so every sized
  // symbol starting at or below it also ends at or below it.
  const ptrdiff_t last = LastAtOrBelow(sized_, at);
  return last >= 0 ? sized_[last].reach : 0;
}

void SymbolIndex::Rebuild() {
  SymbolIndex fresh = Read(module_, symbol_count_, bias_);
  const std::string build_id = ModuleBuildId(module_);
  if (!build_id.empty()) CacheSymbolIndex(build_id, symbol_count_, fresh.sized_, fresh.sizeless_);
  *this = std::move(fresh);
}

}  // namespace memprof::report::symbolize
