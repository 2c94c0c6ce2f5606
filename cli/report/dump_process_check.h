#ifndef MEMPROF_CLI_REPORT_DUMP_PROCESS_CHECK_H_
#define MEMPROF_CLI_REPORT_DUMP_PROCESS_CHECK_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "cli/report/model/profile.h"
#include "cli/report/symbolize/memory_map.h"
#include "common/result.h"

namespace memprof::report {

// `report --pid N` reads the dump's binaries through /proc/N: worth it only
// if N is the process that wrote the dump, or the names come out wrong and
// the advice (install debug symbols) with them. N is that process if it maps
// the dump's first file (its executable, by the kernel's address order) at
// the same address from the same inode: another process, or the same pid
// reused, has other addresses (ASLR) or another file.
//
// Compares a dump's maps with the live process's. kInvalidArgument (exit 2,
// the flag is wrong) naming what differs; a dump without file mappings
// cannot be judged and passes.
[[nodiscard]] Result<void> CompareDumpWithProcess(
    pid_t pid, const std::vector<report::symbolize::MemoryMapping>& dump,
    const std::vector<report::symbolize::MemoryMapping>& live);

// Reads /proc/<pid>/maps (under `proc_root`) and compares: kNotFound (exit 3)
// for a pid that has exited, kPermissionDenied (4) when its maps are
// unreadable, then CompareDumpWithProcess.
[[nodiscard]] Result<void> CheckDumpProcess(pid_t pid, const std::vector<std::string>& dump_maps,
                                            const std::string& proc_root = "/proc");

// --alloc-space and --alloc-objects on a dump whose allocation counts are
// all zero: kFailedPrecondition (exit 5) saying how to record them.
[[nodiscard]] Result<void> CheckMetricHasData(const report::HeapProfile& profile,
                                              report::Metric metric,
                                              const std::string& dump_path);

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_DUMP_PROCESS_CHECK_H_
