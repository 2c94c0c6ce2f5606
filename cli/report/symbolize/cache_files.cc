#include "cli/report/symbolize/cache_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

namespace memprof::report::symbolize {
namespace {

struct CachedFile {
  std::string path;
  uint64_t bytes = 0;
  struct timespec used {};
};

std::vector<CachedFile> ListCached(const std::string& dir, std::string_view suffix) {
  std::vector<CachedFile> files;
  struct CloseDir {
    void operator()(DIR* d) const { ::closedir(d); }
  };
  std::unique_ptr<DIR, CloseDir> d(::opendir(dir.c_str()));
  if (d == nullptr) return files;
  while (const dirent* entry = ::readdir(d.get())) {
    const std::string_view name = entry->d_name;
    if (!name.ends_with(suffix)) continue;
    CachedFile file{dir + "/" + std::string(name), 0, {}};
    struct stat st {};
    if (::lstat(file.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    file.bytes = static_cast<uint64_t>(st.st_size);
    file.used = st.st_mtim;
    files.push_back(std::move(file));
  }
  return files;
}

}  // namespace

std::optional<std::string> DefaultCacheDir(std::string_view name) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/memprof/" + std::string(name);
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') {
    return std::string(home) + "/.cache/memprof/" + std::string(name);
  }
  return std::nullopt;
}

bool IsBuildId(std::string_view id) {
  return id.size() >= 2 && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool UsableCacheDirectory(const std::string& dir) {
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ignored);
  ::mkdir(dir.c_str(), 0700);  // the cache's own directory: no one else's business
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  if (st.st_uid != ::geteuid()) return false;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) ::chmod(dir.c_str(), 0700);
  return true;
}

Fd OpenOwnCacheFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return Fd();
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return Fd();
  }
  return fd;
}

bool WriteCacheFileAtomically(const std::string& path, const std::function<bool(int fd)>& fill) {
  std::string temp = path + ".XXXXXX";
  Fd out(::mkostemp(temp.data(), O_CLOEXEC));
  if (!out.valid()) return false;
  if (!fill(out.get()) || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

void TrimCache(const std::string& dir, std::string_view suffix, uint64_t max_bytes,
               const std::string& keep, const std::function<void(const std::string&)>& removed) {
  std::vector<CachedFile> files = ListCached(dir, suffix);
  uint64_t total = 0;
  for (const CachedFile& file : files) total += file.bytes;
  std::sort(files.begin(), files.end(), [](const CachedFile& a, const CachedFile& b) {
    return std::pair(a.used.tv_sec, a.used.tv_nsec) < std::pair(b.used.tv_sec, b.used.tv_nsec);
  });
  for (const CachedFile& file : files) {
    if (total <= max_bytes) break;
    if (file.path == keep || ::unlink(file.path.c_str()) != 0) continue;
    if (removed) removed(file.path);
    total -= file.bytes;
  }
}

}  // namespace memprof::report::symbolize
