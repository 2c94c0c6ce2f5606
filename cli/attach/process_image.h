#ifndef MEMPROF_CLI_ATTACH_PROCESS_IMAGE_H_
#define MEMPROF_CLI_ATTACH_PROCESS_IMAGE_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// One file mapped into a process, from /proc/PID/maps: its path as the
// process sees it and the mapping of its offset 0, [start, end).
struct MappedFile {
  std::string path;
  uint64_t start = 0;
  uint64_t end = 0;
};

// The files mapped from offset 0 in `pid`, each once, in address order.
[[nodiscard]] Result<std::vector<MappedFile>> ReadMappedFiles(const std::string& proc_root,
                                                              pid_t pid);

// The mapped file whose name (the last path component) starts with `prefix`
// ("libc.so.", "libjemalloc.so."), or nullptr.
const MappedFile* FindMappedFile(const std::vector<MappedFile>& files, std::string_view prefix);

// The run-time addresses of `names` in `file` (exported, defined dynamic
// symbols), read from the mapped file itself (PROC_ROOT/PID/map_files/...)
// or, where that is not allowed, through the process's own root
// (PROC_ROOT/PID/root/PATH), so that a process in another mount namespace,
// or one whose names do not resolve from memprofctl's root (a chroot, a
// toolbox container), is read as it sees itself (common/mapped_file_open.h);
// -v says which. A name that is not exported is missing from the map.
[[nodiscard]] Result<std::map<std::string, uint64_t>> DynamicSymbolAddresses(
    const std::string& proc_root, pid_t pid, const MappedFile& file,
    const std::vector<std::string>& names);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATTACH_PROCESS_IMAGE_H_
