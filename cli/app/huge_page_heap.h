#ifndef MEMPROF_CLI_APP_HUGE_PAGE_HEAP_H_
#define MEMPROF_CLI_APP_HUGE_PAGE_HEAP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memprof::cli {

// `memprofctl report` on a big dump spends much of its time on first
// touches of fresh heap pages (on a VM, each costs microseconds). glibc's
// malloc backs its heap with transparent huge pages when the process starts
// with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, and its threads' heaps too when
// they grow by 32 MiB at a time (glibc.malloc.top_pad): 5 to 10 times fewer
// faults, 2x faster reports on a 20 MiB dump, the same peak RSS
// (docs/performance.md). Tunables are read only at start-up, so main() runs
// itself again with them.

// Inputs at least this big are worth the second exec (a few milliseconds).
inline constexpr std::uintmax_t kHugePageInputBytes = 8u << 20;

// The GLIBC_TUNABLES value that adds hugetlb=1, and top_pad unless `current`
// sets it, to `current` (null: unset); nullopt when `current` already says
// anything about glibc.malloc.hugetlb (the user's choice, or our own second
// run).
std::optional<std::string> TunablesWithHugePages(const char* current);

// Whether `args` (argv without the program) run `report` over inputs of
// kHugePageInputBytes or more in all. Arguments that are not regular files
// (options, values) count nothing.
bool WantsHugePageHeap(const std::vector<std::string>& args);

// Whether transparent huge pages can be had here: the kernel's mode, from
// the contents of /sys/kernel/mm/transparent_hugepage/enabled, is not
// "[never]".
bool HugePagesAvailable(std::string_view thp_enabled);

// If `args` want it and the system has it, execs /proc/self/exe with
// `argv` and the environment `envp` with GLIBC_TUNABLES set; returns (doing
// nothing) otherwise or when the exec fails, and the report then simply runs
// on ordinary pages. Reads no global state (not even `environ`): main.cc
// calls it before the C library has set that up.
void ReexecWithHugePageHeapIfWorthIt(char** argv, char** envp,
                                     const std::vector<std::string>& args);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_HUGE_PAGE_HEAP_H_
