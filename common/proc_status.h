#ifndef MEMPROF_COMMON_PROC_STATUS_H_
#define MEMPROF_COMMON_PROC_STATUS_H_

#include <sys/types.h>

#include <chrono>
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

// The fields of /proc/<pid>/stat that memprof uses (proc(5) numbers them
// from 1: pid is field 1, comm 2, state 3, ppid 4, starttime 22).
struct ProcStat {
  pid_t pid = 0;
  std::string comm;          // without the parentheses; may itself hold ' ', '(' and ')'
  char state = '?';          // 'R', 'S', 'Z', ...
  pid_t ppid = 0;            // 0 for init and for processes whose parent is outside our pid ns
  uint64_t start_ticks = 0;  // when the process started, in clock ticks after boot
};

// Parses the one line of /proc/<pid>/stat. The comm field is whatever the
// program named itself, spaces and parentheses included, so the fields after
// it are found from the last ')'. kInternal for text that is not such a line.
[[nodiscard]] Result<ProcStat> ParseProcStat(std::string_view text);

// The "btime" line of /proc/stat: when the system booted, in seconds since
// the epoch. kInternal when the text has no such line.
[[nodiscard]] Result<int64_t> ParseBootTime(std::string_view text);

// When a process started, on the wall clock: the boot time (ParseBootTime)
// plus its starttime (ParseProcStat) in ticks of `ticks_per_second`
// (sysconf(_SC_CLK_TCK)). Only as exact as btime, which is whole seconds and
// moves when the wall clock is stepped: compare it with a margin.
std::chrono::system_clock::time_point ProcessStartTime(int64_t boot_time, uint64_t start_ticks,
                                                       long ticks_per_second);

// Parses the text of /proc/<pid>/status. Unknown lines are ignored; a text
// without "Pid:" is rejected as not a status file.
[[nodiscard]] Result<ProcStatus> ParseProcStatus(std::string_view text);

// Splits the NUL-separated text of /proc/<pid>/cmdline into arguments.
std::vector<std::string> ParseCmdline(std::string_view text);

}  // namespace memprof

#endif  // MEMPROF_COMMON_PROC_STATUS_H_
