#ifndef MEMPROF_CLI_SYMBOLIZE_INLINE_FRAMES_H_
#define MEMPROF_CLI_SYMBOLIZE_INLINE_FRAMES_H_

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memprof::symbolize {

// The source-level part of a Frame, as DWARF describes it.
struct SourceFrame {
  std::string function;  // demangled linkage name, else DW_AT_name; "" if DWARF has neither
  std::string file;
  int line = 0;
};

// The DWARF view of the run-time `address` in `module`: one frame per
// inlined call around it plus the out-of-line function that holds the code,
// innermost first. With `lines`, the innermost frame gets the line table's
// file:line and each outer frame the call site (DW_AT_call_file/line) of the
// inlined call below it. Empty when no DWARF covers the address.
std::vector<SourceFrame> InlineFrames(Dwfl_Module* module, uint64_t address, bool lines);

}  // namespace memprof::symbolize

#endif  // MEMPROF_CLI_SYMBOLIZE_INLINE_FRAMES_H_
