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
// later reports map it as it is: <dir>/<build-id>.debug, and beside it
// <build-id>.debug.origin, the path of the file it was made from.
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

// A plain copy from the cache, and the path of the debug file it was made
// from (what messages name, and where libdw looks for a .gnu_debugaltlink).
struct CachedDebugFile {
  Fd fd;
  std::string origin;
};

// The cache's copy for build ID `build_id` (hex), if there is one of ours
// and the debug file it was made from is still installed; its time is set
// to now, which is what the bound removes by. libdwfl must be handed this
// instead of looking the file up: once it has found a file itself, it has
// already opened it for its DWARF.
std::optional<CachedDebugFile> OpenCachedDebugFile(std::string_view build_id);

// Writes the plain copy of the debug file open on `fd` (found at `origin`)
// into the cache, for the next reports, when it has compressed sections.
// Never fails louder than not writing it: a cache is an optimisation.
void CachePlainCopy(int fd, std::string_view build_id, const std::string& origin);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_DEBUG_FILE_CACHE_H_
