#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOLIZER_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOLIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cli/report/symbolize/frame.h"
#include "cli/report/symbolize/memory_map.h"
#include "cli/report/symbolize/module_report.h"
#include "cli/report/symbolize/symbolizer_options.h"
#include "common/result.h"

namespace memprof::report::symbolize {

// Turns addresses of one process into source frames with elfutils' libdwfl,
// given that process's memory map (a dump's MAPPED_LIBRARIES: section).
//
// Each mapped ELF file is opened once, the first time an address needs it,
// and reported to libdwfl at the load bias its mappings imply (so PIEs and
// shared libraries resolve wherever ASLR put them). Its DWARF comes from the
// file itself or a separate debug file found by build ID or debuglink under
// `options.debug_dirs`. Results are cached per address, so the spans handed
// out stay valid (and unchanged) for the Symbolizer's lifetime.
//
// Not thread-safe: a libdwfl session is not. Movable, not copyable.
class Symbolizer {
 public:
  [[nodiscard]] static Result<Symbolizer> Create(std::vector<MemoryMapping> mappings,
                                                 SymbolizerOptions options = {});
  // Same, from raw /proc/<pid>/maps lines; malformed lines are skipped and
  // counted in skipped_map_lines().
  [[nodiscard]] static Result<Symbolizer> FromMapsLines(std::span<const std::string> lines,
                                                        SymbolizerOptions options = {});

  Symbolizer(Symbolizer&&) noexcept;
  Symbolizer& operator=(Symbolizer&&) noexcept;
  ~Symbolizer();

  // Frames of a *return address*, innermost inline frame first; never empty.
  // Every frame of a heap profile stack is a return address (jemalloc records
  // where each call returns to), so like jeprof/pprof this looks up
  // `address - 1`: the call instruction itself. That keeps the line of the
  // call and keeps a call that ends a function (noreturn callee) or an
  // inlined block from being attributed to whatever follows it.
  // module_offset still reports `address` itself. Unresolvable addresses give
  // one frame named "module+0xoffset", or "0x<address>" outside any file.
  std::span<const Frame> Resolve(uint64_t address);

  // Same for an address that is itself an instruction (a function entry, a
  // signal's PC): looked up as given.
  std::span<const Frame> ResolvePc(uint64_t pc);

  // Opens the file mapped at `pc` and reads what its lookups will need (the
  // symbol table, the DWARF and its address ranges), so that a later Resolve
  // in it costs only the lookup. Answers are the same with or without it; a
  // file only prepared is not in Modules().
  void Prepare(uint64_t pc);

  size_t skipped_map_lines() const;
  // One line per binary that could not be used ("cannot open ...", "... is
  // not ELF"), for the caller to warn about once; its addresses resolve to
  // module+0xoffset.
  std::vector<std::string> Problems() const;
  // What was found for each file an address has needed so far.
  std::vector<ModuleReport> Modules() const;

 private:
  struct Impl;
  explicit Symbolizer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOLIZER_H_
