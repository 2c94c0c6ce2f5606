#ifndef MEMPROF_COMMON_PROC_STATUS_H_
#define MEMPROF_COMMON_PROC_STATUS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof {

// The fields of /proc/<pid>/status that memprof uses.
struct ProcStatus {
  std::string name;             // "Name:" (the comm, at most 15 chars)
  pid_t pid = 0;                // "Pid:"
  pid_t ppid = 0;               // "PPid:"
  uid_t real_uid = 0;           // first "Uid:" field
  uid_t effective_uid = 0;      // second "Uid:" field
  std::vector<pid_t> ns_pids;   // "NSpid:", outermost namespace first
  uint64_t vm_rss_bytes = 0;    // "VmRSS:" (0 for kernel threads)
  uint32_t threads = 0;         // "Threads:"
};

// Parses the text of /proc/<pid>/status. Unknown lines are ignored; a text
// without "Pid:" is rejected as not a status file.
[[nodiscard]] Result<ProcStatus> ParseProcStatus(std::string_view text);

// Splits the NUL-separated text of /proc/<pid>/cmdline into arguments.
std::vector<std::string> ParseCmdline(std::string_view text);

// Reads a whole (small, usually /proc) file. kNotFound if it does not exist,
// kPermissionDenied on EACCES, kInternal otherwise.
[[nodiscard]] Result<std::string> ReadTextFile(const std::string& path);

}  // namespace memprof

#endif  // MEMPROF_COMMON_PROC_STATUS_H_
