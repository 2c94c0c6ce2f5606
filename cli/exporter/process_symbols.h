#ifndef MEMPROF_CLI_EXPORTER_PROCESS_SYMBOLS_H_
#define MEMPROF_CLI_EXPORTER_PROCESS_SYMBOLS_H_

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// The names of code addresses (pprof's location addresses: as given, not
// return addresses) in the live local process `pid`, found as the heap
// profiles the exporter serves name their frames: through the report
// engine's symbolizer over the process's current /proc/<pid>/maps, its files
// read through /proc/<pid>/map_files and /proc/<pid>/root (containers,
// replaced files), debug files by build ID and debuglink; the settings of
// `memprofctl report --pid`. One name per address, the innermost function
// when inlined, "" where no symbol covers it (a stripped file's own
// functions). Errors: kNotFound when the process is gone, kPermissionDenied
// when its maps cannot be read.
[[nodiscard]] Result<std::vector<std::string>> NameProcessAddresses(
    pid_t pid, std::span<const uint64_t> addresses);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_PROCESS_SYMBOLS_H_
