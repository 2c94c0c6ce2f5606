#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_INLINE_FRAMES_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_INLINE_FRAMES_H_

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/report/symbolize/cu_function_index.h"

namespace memprof::report::symbolize {

// The source-level part of a Frame, as DWARF describes it.
struct SourceFrame {
  std::string function;  // demangled linkage name, else DW_AT_name; "" if DWARF has neither
  std::string file;
  int line = 0;
};

// Answers "which (inlined) functions hold this address" from DWARF, keeping
// one CuFunctionIndex per compilation unit it has looked into and each
// function's demangled name. Must not outlive the Dwfl session it reads.
class InlineFrameResolver {
 public:
  // The DWARF view of the run-time `address` in `module`: one frame per
  // inlined call around it plus the out-of-line function that holds the
  // code, innermost first. With `lines`, the innermost frame gets the line
  // table's file:line and each outer frame the call site
  // (DW_AT_call_file/line) of the inlined call below it. Empty when no DWARF
  // covers the address.
  std::vector<SourceFrame> Frames(Dwfl_Module* module, uint64_t address, bool lines);

 private:
  const CuFunctionIndex& IndexFor(Dwarf_Die* cu_die);
  // The demangled name of a function node, computed once per DIE.
  const std::string& Name(Dwfl_Module* module, Dwarf_Addr bias, const CuFunctionIndex& index,
                          int node);

  // Keyed by the DIE's address in the mapped debug data: unique per DIE.
  std::unordered_map<const void*, std::unique_ptr<CuFunctionIndex>> indices_;
  std::unordered_map<const void*, std::string> names_;
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_INLINE_FRAMES_H_
