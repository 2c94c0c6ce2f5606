#ifndef MEMPROF_COMMON_PROC_SMAPS_H_
#define MEMPROF_COMMON_PROC_SMAPS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof {

// One mapping of /proc/<pid>/smaps, with the fields memprof uses.
struct SmapsMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;             // "rw-p", "r-xp", "---p", "rw-s"
  std::string path;              // "" when anonymous, "[heap]", "[stack]", "/usr/lib/..."
  uint64_t rss_bytes = 0;        // "Rss:"
  uint64_t anonymous_bytes = 0;  // "Anonymous:"
  uint64_t swap_bytes = 0;       // "Swap:"

  uint64_t size() const { return end - start; }
};

// Where the resident memory of a process is, by kind of mapping (each
// mapping counts in exactly one kind, so the kinds add up to `rss_bytes`).
struct SmapsBreakdown {
  uint64_t rss_bytes = 0;            // all mappings
  uint64_t thread_stacks_bytes = 0;  // [stack] and what ThreadStackIndexes finds
  uint32_t thread_stacks = 0;        // how many stacks that is
  uint64_t binaries_bytes = 0;       // files mapped executable somewhere (programs,
                                     // libraries), and [vdso]/[vvar]/[vsyscall]
  uint64_t other_files_bytes = 0;    // every other file mapping
  uint64_t shared_memory_bytes = 0;  // MAP_SHARED anonymous, /dev/shm, SysV, memfd
  uint64_t anonymous_bytes = 0;      // the rest: private anonymous memory and [heap]
  // The largest private anonymous mappings (not stacks), by RSS, largest first.
  std::vector<SmapsMapping> top_anonymous;
};

// Largest guard page glibc puts below a thread stack that the stack heuristic
// accepts (glibc's default is one page; pthread_attr_setguardsize can raise it).
inline constexpr uint64_t kMaxThreadGuardBytes = 64 * 1024;

// Parses the text of /proc/<pid>/smaps. kInternal for text that does not
// start with a mapping line.
[[nodiscard]] Result<std::vector<SmapsMapping>> ParseSmaps(std::string_view text);

// The "Rss:" of /proc/<pid>/smaps_rollup, in bytes. kInternal without one.
[[nodiscard]] Result<uint64_t> ParseSmapsRollupRss(std::string_view text);

// The indexes (into `mappings`, in address order as smaps lists them) of the
// thread stacks: [stack], the main thread's, and every private anonymous
// read-write mapping directly above a private anonymous PROT_NONE mapping of
// at most kMaxThreadGuardBytes -- the guard page glibc (and most thread
// libraries) put below each stack they map. A heuristic: a stack created
// without a guard (guardsize 0, or a caller-supplied stack) is missed, and a
// mapping laid out like a stack by someone else is counted.
std::vector<size_t> ThreadStackIndexes(const std::vector<SmapsMapping>& mappings);

// Sorts every mapping into one kind (see SmapsBreakdown) and keeps the
// `top_n` largest anonymous ones.
SmapsBreakdown BreakDownSmaps(const std::vector<SmapsMapping>& mappings, size_t top_n);

}  // namespace memprof

#endif  // MEMPROF_COMMON_PROC_SMAPS_H_
