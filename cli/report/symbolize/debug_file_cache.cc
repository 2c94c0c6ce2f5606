#include "cli/report/symbolize/debug_file_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cli/report/symbolize/elf_layout.h"
#include "common/fd.h"

namespace memprof::report::symbolize {
namespace {

std::mutex g_mu;
std::optional<DebugFileCacheSettings> g_settings;  // guarded by g_mu

std::optional<DebugFileCacheSettings> CurrentSettings() {
  std::lock_guard lock(g_mu);
  return g_settings;
}

// A build ID is what names the copy: hex only, so it cannot leave the directory.
bool IsBuildId(std::string_view id) {
  return id.size() >= 2 && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool HasCompressedSection(int fd) {
  Result<ElfPtr> elf = BeginElf(fd);
  if (!elf) return false;
  for (Elf_Scn* scn = elf_nextscn(elf->get(), nullptr); scn != nullptr;
       scn = elf_nextscn(elf->get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_flags & SHF_COMPRESSED) != 0) return true;
  }
  return false;
}

// Whether the cache directory, made when missing, is ours alone: owned by
// us, and no one else may write into it (write access for others is taken
// away; another owner makes the cache unusable).
bool UsableDirectory(const std::string& dir) {
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  if (st.st_uid != ::geteuid()) return false;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) ::chmod(dir.c_str(), 0700);
  return true;
}

constexpr char kOriginSuffix[] = ".origin";

std::string CopyPath(const DebugFileCacheSettings& settings, std::string_view build_id) {
  return settings.dir + "/" + std::string(build_id) + ".debug";
}

// A regular file of ours at `path`, open for reading.
Fd OpenOurs(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return Fd();
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return Fd();
  }
  return fd;
}

std::string ReadOrigin(int fd) {
  char buffer[4096];
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer), 0);
  if (n <= 0 || static_cast<size_t>(n) == sizeof(buffer)) return std::string();
  return std::string(buffer, static_cast<size_t>(n));
}

bool CopyBytes(int from, int to) {
  const Result<uint64_t> size = FileSize(from);
  if (!size) return false;
  off_t offset = 0;
  while (static_cast<uint64_t>(offset) < *size) {
    const ssize_t n =
        ::sendfile(to, from, &offset, static_cast<size_t>(*size - static_cast<uint64_t>(offset)));
    if (n <= 0) return false;
  }
  return true;
}

// Inflates every compressed section of the ELF file open for writing on
// `fd` in place; libelf lays the file out again.
bool Decompress(int fd) {
  Result<ElfPtr> elf = BeginElf(fd, ELF_C_RDWR);
  if (!elf) return false;
  for (Elf_Scn* scn = elf_nextscn(elf->get(), nullptr); scn != nullptr;
       scn = elf_nextscn(elf->get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) return false;
    if ((shdr.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(scn, 0, 0) < 0) return false;
  }
  return elf_update(elf->get(), ELF_C_WRITE) >= 0;
}

struct CachedFile {
  std::string path;
  uint64_t bytes = 0;
  struct timespec used {};
};

std::vector<CachedFile> ListCached(const std::string& dir) {
  std::vector<CachedFile> files;
  struct CloseDir {
    void operator()(DIR* d) const { ::closedir(d); }
  };
  std::unique_ptr<DIR, CloseDir> d(::opendir(dir.c_str()));
  if (d == nullptr) return files;
  while (const dirent* entry = ::readdir(d.get())) {
    const std::string_view name = entry->d_name;
    if (!name.ends_with(".debug")) continue;
    CachedFile file{dir + "/" + std::string(name), 0, {}};
    struct stat st {};
    if (::lstat(file.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    file.bytes = static_cast<uint64_t>(st.st_size);
    file.used = st.st_mtim;
    files.push_back(std::move(file));
  }
  return files;
}

// Removes the least recently used copies until the rest fit `max_bytes`;
// `keep` (the one just written) stays.
void Trim(const std::string& dir, uint64_t max_bytes, const std::string& keep) {
  std::vector<CachedFile> files = ListCached(dir);
  uint64_t total = 0;
  for (const CachedFile& file : files) total += file.bytes;
  std::sort(files.begin(), files.end(), [](const CachedFile& a, const CachedFile& b) {
    return std::pair(a.used.tv_sec, a.used.tv_nsec) < std::pair(b.used.tv_sec, b.used.tv_nsec);
  });
  for (const CachedFile& file : files) {
    if (total <= max_bytes) break;
    if (file.path == keep || ::unlink(file.path.c_str()) != 0) continue;
    ::unlink((file.path + kOriginSuffix).c_str());
    total -= file.bytes;
  }
}

// Writes `path` with `fill`: a temporary file beside it, renamed into place
// once whole, so a reader never sees half of one (two reports at once each
// write their own and the last rename wins).
template <typename Fill>
bool WriteAtomically(const std::string& path, Fill fill) {
  std::string temp = path + ".XXXXXX";
  Fd out(::mkostemp(temp.data(), O_CLOEXEC));
  if (!out.valid()) return false;
  if (!fill(out.get()) || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> DefaultDebugFileCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/memprof/debug-files";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/memprof/debug-files";
  return std::nullopt;
}

void SetDebugFileCache(std::optional<DebugFileCacheSettings> settings) {
  std::lock_guard lock(g_mu);
  g_settings = std::move(settings);
}

std::optional<CachedDebugFile> OpenCachedDebugFile(std::string_view build_id) {
  const std::optional<DebugFileCacheSettings> settings = CurrentSettings();
  if (!settings || !IsBuildId(build_id)) return std::nullopt;
  const std::string path = CopyPath(*settings, build_id);
  Fd origin_fd = OpenOurs(path + kOriginSuffix);
  if (!origin_fd.valid()) return std::nullopt;
  std::string origin = ReadOrigin(origin_fd.get());
  struct stat st {};
  if (origin.empty() || ::stat(origin.c_str(), &st) != 0) return std::nullopt;
  Fd fd = OpenOurs(path);
  if (!fd.valid()) return std::nullopt;
  ::futimens(fd.get(), nullptr);
  return CachedDebugFile{std::move(fd), std::move(origin)};
}

void CachePlainCopy(int fd, std::string_view build_id, const std::string& origin) {
  const std::optional<DebugFileCacheSettings> settings = CurrentSettings();
  if (!settings || !IsBuildId(build_id) || origin.empty() || origin.find('\n') != origin.npos ||
      !HasCompressedSection(fd) || !UsableDirectory(settings->dir)) {
    return;
  }
  const std::string path = CopyPath(*settings, build_id);
  if (WriteAtomically(path + kOriginSuffix,
                      [&](int out) { return WriteAll(out, origin, path).has_value(); }) &&
      WriteAtomically(path, [&](int out) { return CopyBytes(fd, out) && Decompress(out); })) {
    Trim(settings->dir, settings->max_bytes, path);
  }
}

}  // namespace memprof::report::symbolize
