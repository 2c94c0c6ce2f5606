#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_DEBUG_FILE_CACHE_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_DEBUG_FILE_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/fd.h"

namespace memprof::report::symbolize {

// Debian compresses the DWARF sections of its debug files (libc6-dbg's
// .debug_info is zlib'd, SHF_COMPRESSED), and libdw inflates every one of
// them each time a file is opened: for libc, ~10 MB and most of a report's
// symbolizing time. The cache keeps one plain copy of such a file per build
// ID, written once with libelf (elf_compress to none, elf_update), so that
// later reports map it as it is.
struct DebugFileCacheSettings {
  std::string dir;                         // <cache>/memprof/debug-files, made 0700 when missing
  uint64_t max_bytes = uint64_t{2} << 30;  // the oldest copies go beyond this
};

// The default place: $XDG_CACHE_HOME/memprof/debug-files, else
// $HOME/.cache/memprof/debug-files; nullopt when neither is set.
std::optional<std::string> DefaultDebugFileCacheDir();

// Sets the process-wide cache (nullopt: none, every file read as it is).
// The symbolizing threads read it; set it before they start.
void SetDebugFileCache(std::optional<DebugFileCacheSettings> settings);

// The plain copy of the debug file open on `fd` (build ID `build_id`, in
// hex), from the cache or written into it now: an open descriptor, or an
// invalid one when the file has no compressed section, there is no cache,
// or the copy cannot be made (then `fd` is read as before). Never fails
// louder than that: a cache is an optimisation.
Fd PlainDebugFile(int fd, std::string_view build_id);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_DEBUG_FILE_CACHE_H_
