#include "cli/symbolize/inline_frames.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <optional>

#include "cli/symbolize/demangle.h"

namespace memprof::symbolize {
namespace {

// dwarf_getscopes* return malloc'd arrays.
using DieArray = std::unique_ptr<Dwarf_Die, decltype(&std::free)>;

bool IsFunction(Dwarf_Die* die) {
  const int tag = dwarf_tag(die);
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

// The linkage name gives the qualified C++ name with parameter types (what
// addr2line -C prints); C functions and main() only have DW_AT_name. The
// _integrate lookup follows DW_AT_abstract_origin (inlined instances) and
// DW_AT_specification (out-of-class member definitions).
std::string FunctionName(Dwarf_Die* die) {
  for (const unsigned int attribute : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    Dwarf_Attribute attr;
    const char* name = dwarf_formstring(dwarf_attr_integrate(die, attribute, &attr));
    if (name != nullptr) return Demangle(name);
  }
  return {};
}

// The innermost subprogram or inlined instance whose ranges contain `pc`
// (lexical blocks in between are skipped).
std::optional<Dwarf_Die> InnermostFunction(Dwarf_Die* cu_die, Dwarf_Addr pc) {
  Dwarf_Die* scopes = nullptr;
  const int count = dwarf_getscopes(cu_die, pc, &scopes);
  const DieArray owner(scopes, &std::free);
  for (int i = 0; i < count; ++i) {
    if (IsFunction(&scopes[i])) return scopes[i];
  }
  return std::nullopt;
}

// Where `inlined` (a DW_TAG_inlined_subroutine) was called from: that is the
// position shown for the frame of its caller.
void SetCallSite(Dwarf_Die* inlined, SourceFrame& caller) {
  Dwarf_Attribute attr;
  Dwarf_Word file_index = 0;
  Dwarf_Word line = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &file_index) != 0) return;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &line) != 0) return;
  Dwarf_Die cu_die;
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_diecu(inlined, &cu_die, nullptr, nullptr) == nullptr) return;
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

// Walks from `innermost` outwards through the enclosing inlined instances up
// to the out-of-line subprogram. dwarf_getscopes_die gives the DIE's
// parents in the concrete tree, [0] being the DIE itself.
std::vector<SourceFrame> FramesOutwards(Dwarf_Die innermost, bool lines) {
  Dwarf_Die* chain = nullptr;
  const int count = dwarf_getscopes_die(&innermost, &chain);
  const DieArray owner(chain, &std::free);
  if (count <= 0) return {SourceFrame{FunctionName(&innermost), "", 0}};
  std::vector<SourceFrame> frames;
  Dwarf_Die* callee = nullptr;
  for (int i = 0; i < count; ++i) {
    if (!IsFunction(&chain[i])) continue;
    SourceFrame& frame = frames.emplace_back(SourceFrame{FunctionName(&chain[i]), "", 0});
    if (lines && callee != nullptr) SetCallSite(callee, frame);
    if (dwarf_tag(&chain[i]) == DW_TAG_subprogram) break;
    callee = &chain[i];
  }
  return frames;
}

}  // namespace

std::vector<SourceFrame> InlineFrames(Dwfl_Module* module, uint64_t address, bool lines) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu_die = dwfl_module_addrdie(module, address, &bias);
  if (cu_die == nullptr) return {};
  const std::optional<Dwarf_Die> innermost = InnermostFunction(cu_die, address - bias);
  if (!innermost) return {};
  std::vector<SourceFrame> frames = FramesOutwards(*innermost, lines);
  if (lines && !frames.empty()) SetLineTablePosition(module, address, frames.front());
  return frames;
}

}  // namespace memprof::symbolize
