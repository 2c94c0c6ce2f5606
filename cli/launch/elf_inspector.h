#ifndef MEMPROF_CLI_LAUNCH_ELF_INSPECTOR_H_
#define MEMPROF_CLI_LAUNCH_ELF_INSPECTOR_H_

#include <string>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// What `memprofctl run` needs to know about a program before exec'ing it.
struct ElfInfo {
  bool is_elf = false;              // false for scripts (#!) and other non-ELF files
  bool is_64bit = false;            // ELFCLASS64
  bool has_interp = false;          // PT_INTERP: loaded by ld.so, so LD_PRELOAD works
  bool defines_mallctl = false;     // defines mallctl or je_mallctl (jemalloc linked in)
  std::vector<std::string> needed;  // DT_NEEDED entries, in order

  // DT_NEEDED names libjemalloc*, or jemalloc is linked into the file itself.
  bool UsesJemalloc() const;
};

// Reads the ELF headers, dynamic section and symbol tables of `path` with
// elfutils' libelf. A readable file that is not ELF is not an error
// (is_elf = false). kNotFound / kPermissionDenied / kInternal if it cannot be read.
[[nodiscard]] Result<ElfInfo> InspectElf(const std::string& path);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_LAUNCH_ELF_INSPECTOR_H_
