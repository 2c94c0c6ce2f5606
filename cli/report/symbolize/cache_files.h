#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_CACHE_FILES_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_CACHE_FILES_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/fd.h"

namespace memprof::report::symbolize {

// What the report's caches (debug_file_cache.h, symbol_index_cache.h) have
// in common: one directory of the user's, files named by build ID, written
// whole or not at all, and bounded by size, the least recently used going
// first.

// A cache's process-wide settings: set by the report pipeline before the
// symbolizing threads start, read by them.
template <typename Settings>
class CacheSetting {
 public:
  void Set(std::optional<Settings> settings) {
    std::lock_guard lock(mu_);
    settings_ = std::move(settings);
  }
  std::optional<Settings> Get() const {
    std::lock_guard lock(mu_);
    return settings_;
  }

 private:
  mutable std::mutex mu_;
  std::optional<Settings> settings_;  // guarded by mu_
};

// $XDG_CACHE_HOME/memprof/<name>, else $HOME/.cache/memprof/<name>;
// nullopt when neither is set (or not absolute).
std::optional<std::string> DefaultCacheDir(std::string_view name);

// A build ID names a cached file: lowercase hex only, so that it cannot
// leave the directory.
bool IsBuildId(std::string_view id);

// Whether the cache directory, made when missing, is ours alone: owned by
// us, and no one else may write into it (write access for others is taken
// away; another owner makes the cache unusable).
bool UsableCacheDirectory(const std::string& dir);

// A regular file of ours at `path` (not a symbolic link), open for reading;
// an invalid Fd otherwise.
Fd OpenOwnCacheFile(const std::string& path);

// Writes `path` with `fill`: a temporary file beside it, renamed into place
// once whole, so a reader never sees half of one (two reports at once each
// write their own and the last rename wins).
bool WriteCacheFileAtomically(const std::string& path, const std::function<bool(int fd)>& fill);

// Removes the least recently used files of `dir` whose names end with
// `suffix` (by modification time, which a reader sets to now) until the
// rest fit `max_bytes`; `keep` stays. `removed` is called with the path of
// each file removed (for the files that go with it).
void TrimCache(const std::string& dir, std::string_view suffix, uint64_t max_bytes,
               const std::string& keep,
               const std::function<void(const std::string&)>& removed = nullptr);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_CACHE_FILES_H_
