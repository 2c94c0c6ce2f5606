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
// process sees it and the address its offset 0 is mapped at.
struct MappedFile {
  std::string path;
  uint64_t start = 0;
};

// The files mapped from offset 0 in `pid`, each once, in address order.
[[nodiscard]] Result<std::vector<MappedFile>> ReadMappedFiles(const std::string& proc_root,
                                                              pid_t pid);

// The mapped file whose name (the last path component) starts with `prefix`
// ("libc.so.", "libjemalloc.so."), or nullptr.
const MappedFile* FindMappedFile(const std::vector<MappedFile>& files, std::string_view prefix);

// The run-time addresses of `names` in `file` (exported, defined dynamic
// symbols), read from the file through the process's own root
// (PROC_ROOT/PID/root/PATH), so a process in another mount namespace is read
// as it sees itself. A name that is not exported is missing from the map.
[[nodiscard]] Result<std::map<std::string, uint64_t>> DynamicSymbolAddresses(
    const std::string& proc_root, pid_t pid, const MappedFile& file,
    const std::vector<std::string>& names);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_ATTACH_PROCESS_IMAGE_H_
