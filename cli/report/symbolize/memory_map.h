#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_MEMORY_MAP_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_MEMORY_MAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memprof::report::symbolize {

// One line of /proc/<pid>/maps (also the format of a heap_v2 dump's
// MAPPED_LIBRARIES: section): `start-end perms offset dev inode path`.
struct MemoryMapping {
  uint64_t start = 0;    // first address of the mapping
  uint64_t end = 0;      // one past the last address
  uint64_t offset = 0;   // file offset mapped at `start`
  std::string perms;     // e.g. "r-xp"
  uint64_t inode = 0;    // 0 for anonymous mappings
  std::string path;      // "" (anonymous), "[vdso]", "/usr/lib/libc.so.6", ...
  bool deleted = false;  // the kernel appended " (deleted)": the file was unlinked

  bool Contains(uint64_t address) const { return address >= start && address < end; }
  bool Executable() const { return perms.size() >= 3 && perms[2] == 'x'; }
  // Backed by a file we may be able to open (pseudo paths like [vdso] are not).
  bool FileBacked() const { return !path.empty() && path.front() == '/'; }
  // Last path component, the name frames show for the module ("libc.so.6").
  std::string Basename() const;
};

// Parses one maps line. Returns nullopt for anything malformed (missing
// fields, bad hex, start >= end) instead of guessing.
[[nodiscard]] std::optional<MemoryMapping> ParseMemoryMapLine(std::string_view line);

struct ParsedMemoryMap {
  std::vector<MemoryMapping> mappings;  // in input order
  size_t skipped = 0;                   // malformed lines (blank lines are ignored, not counted)
};

// Parses many lines; malformed ones are skipped and counted, never fatal,
// because a dump's maps section is data we did not produce.
[[nodiscard]] ParsedMemoryMap ParseMemoryMap(std::span<const std::string> lines);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_MEMORY_MAP_H_
