#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_ELF_LAYOUT_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_ELF_LAYOUT_H_

#include <libelf.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/report/symbolize/memory_map.h"
#include "common/result.h"

namespace memprof::report::symbolize {

using ElfPtr = std::unique_ptr<Elf, decltype(&elf_end)>;

// libelf's view of the ELF file open on `fd` (the fd stays ours), read with
// `command` (ELF_C_READ_MMAP, or ELF_C_RDWR to change it);
// kFailedPrecondition if it is not ELF.
[[nodiscard]] Result<ElfPtr> BeginElf(int fd, Elf_Cmd command = ELF_C_READ_MMAP);

// The part of a PT_LOAD program header that decides where file bytes land.
struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t offset = 0;
  uint64_t filesz = 0;
  bool executable = false;  // PF_X
};

// The load bias of an ELF file that `mapping` maps: the value added to the
// file's p_vaddr / symbol / DWARF addresses to get run-time addresses (0 for
// ET_EXEC, the load address for a PIE or shared library). Computed from the
// PT_LOAD segment whose file range holds `mapping.offset`, preferring one
// whose PF_X agrees with the mapping's permissions, so any mapping of the
// file works, not only the first. nullopt if no segment fits (not this file).
[[nodiscard]] std::optional<uint64_t> LoadBias(std::span<const LoadSegment> segments,
                                               const MemoryMapping& mapping);

// Reads the PT_LOAD headers of the ELF file open on `fd` (the fd stays ours).
// kFailedPrecondition if it is not ELF.
[[nodiscard]] Result<std::vector<LoadSegment>> ReadLoadSegments(int fd);

// Hex string of the NT_GNU_BUILD_ID note of the ELF file at `path`
// (e.g. "4c4e..."), as pprof mappings and .build-id/ lookups spell it.
// kNotFound if the file has no build ID; kNotFound / kPermissionDenied /
// kFailedPrecondition when it cannot be opened or is not ELF.
[[nodiscard]] Result<std::string> BuildId(const std::string& path);
// The same of the open file `fd`; `path` names it in errors.
[[nodiscard]] Result<std::string> BuildIdOf(int fd, const std::string& path);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_ELF_LAYOUT_H_
