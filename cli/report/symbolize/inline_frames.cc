#include "cli/report/symbolize/inline_frames.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <initializer_list>
#include <memory>
#include <optional>

#include "cli/report/symbolize/demangle.h"

namespace memprof::report::symbolize {
namespace {

// The linkage name gives the qualified C++ name with parameter types (what
// addr2line -C prints); C functions, main() and constructors/destructors
// (one DIE for several ELF symbols) only have DW_AT_name. The _integrate
// lookup follows DW_AT_abstract_origin (inlined instances) and
// DW_AT_specification (out-of-class member definitions).
struct FunctionName {
  std::string name;
  bool qualified = false;  // from the linkage name: full C++ name with parameters
};

FunctionName ReadFunctionName(Dwarf_Die* die) {
  for (const unsigned int attribute : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    Dwarf_Attribute attr;
    const char* name = dwarf_formstring(dwarf_attr_integrate(die, attribute, &attr));
    if (name != nullptr) return {Demangle(name), true};
  }
  Dwarf_Attribute attr;
  const char* name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
  return {name != nullptr ? name : "", false};
}

// Where an out-of-line function starts. A function split into hot and cold
// parts has DW_AT_ranges and no DW_AT_low_pc, so dwarf_entrypc fails; GCC
// lists the entry (hot) range first, and the cold part usually lies at
// lower addresses (.text.unlikely), so the first range, not the lowest.
std::optional<Dwarf_Addr> EntryPc(const CuFunctionIndex::Node& node) {
  Dwarf_Die die = node.die;
  Dwarf_Addr entry = 0;
  if (dwarf_entrypc(&die, &entry) == 0) return entry;
  if (!node.ranges.empty()) return node.ranges.front().first;
  return std::nullopt;
}

// The ELF symbol that starts at an out-of-line function's entry point,
// demangled: the same function, but qualified ("ns::C::~C()" where DWARF
// only says "~C"). Looked up at the entry rather than at the address so that
// a function's .cold part gets the same name as its hot part.
std::optional<std::string> EntrySymbolName(Dwfl_Module* module, const CuFunctionIndex::Node& node,
                                           Dwarf_Addr bias) {
  const std::optional<Dwarf_Addr> entry = EntryPc(node);
  if (!entry) return std::nullopt;
  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char* name =
      dwfl_module_addrinfo(module, *entry + bias, &offset, &symbol, nullptr, nullptr, nullptr);
  if (name == nullptr || offset != 0) return std::nullopt;
  return Demangle(name);
}

// Where `inlined` (a DW_TAG_inlined_subroutine) was called from: that is the
// position shown for the frame of its caller.
void SetCallSite(Dwarf_Die inlined, Dwarf_Die cu_die, SourceFrame& caller) {
  Dwarf_Attribute attr;
  Dwarf_Word file_index = 0;
  Dwarf_Word line = 0;
  if (dwarf_formudata(dwarf_attr(&inlined, DW_AT_call_file, &attr), &file_index) != 0) return;
  if (dwarf_formudata(dwarf_attr(&inlined, DW_AT_call_line, &attr), &line) != 0) return;
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_getsrcfiles(&cu_die, &files, &file_count) != 0 || file_index >= file_count) return;
  const char* file = dwarf_filesrc(files, file_index, nullptr, nullptr);
  caller.file = file != nullptr ? file : "";
  caller.line = static_cast<int>(line);
}

void SetLineTablePosition(Dwfl_Module* module, uint64_t address, SourceFrame& frame) {
  int line = 0;
  const char* file =
      dwfl_lineinfo(dwfl_module_getsrc(module, address), nullptr, &line, nullptr, nullptr, nullptr);
  if (file == nullptr) return;
  frame.file = file;
  frame.line = line;
}

}  // namespace

const CuFunctionIndex& InlineFrameResolver::IndexFor(Dwarf_Die* cu_die) {
  std::unique_ptr<CuFunctionIndex>& index = indices_[cu_die->addr];
  if (index == nullptr) index = std::make_unique<CuFunctionIndex>(*cu_die);
  return *index;
}

const std::string& InlineFrameResolver::Name(Dwfl_Module* module, Dwarf_Addr bias,
                                             const CuFunctionIndex& index, int node) {
  Dwarf_Die die = index.node(node).die;
  auto [it, inserted] = names_.try_emplace(die.addr);
  if (!inserted) return it->second;
  FunctionName name = ReadFunctionName(&die);
  if (!name.qualified && index.node(node).parent < 0) {
    if (std::optional<std::string> symbol = EntrySymbolName(module, index.node(node), bias)) {
      name.name = std::move(*symbol);
    }
  }
  it->second = std::move(name.name);
  return it->second;
}

std::vector<SourceFrame> InlineFrameResolver::Frames(Dwfl_Module* module, uint64_t address,
                                                     bool lines) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu_die = dwfl_module_addrdie(module, address, &bias);
  if (cu_die == nullptr) return {};
  const CuFunctionIndex& index = IndexFor(cu_die);
  const std::vector<int> chain = index.Chain(address - bias);
  std::vector<SourceFrame> frames;
  for (size_t i = 0; i < chain.size(); ++i) {
    SourceFrame& frame =
        frames.emplace_back(SourceFrame{Name(module, bias, index, chain[i]), "", 0});
    if (!lines) continue;
    if (i == 0) {
      SetLineTablePosition(module, address, frame);
    } else {
      SetCallSite(index.node(chain[i - 1]).die, index.cu_die(), frame);
    }
  }
  return frames;
}

}  // namespace memprof::report::symbolize
