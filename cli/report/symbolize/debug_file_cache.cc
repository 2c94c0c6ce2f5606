#include "cli/report/symbolize/debug_file_cache.h"

#include <gelf.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "cli/report/symbolize/cache_files.h"
#include "cli/report/symbolize/elf_layout.h"
#include "common/fd.h"

namespace memprof::report::symbolize {
namespace {

CacheSetting<DebugFileCacheSettings> g_debug_file_cache;

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

constexpr char kOriginSuffix[] = ".origin";

std::string CopyPath(const DebugFileCacheSettings& settings, std::string_view build_id) {
  return settings.dir + "/" + std::string(build_id) + ".debug";
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

}  // namespace

std::optional<std::string> DefaultDebugFileCacheDir() { return DefaultCacheDir("debug-files"); }

void SetDebugFileCache(std::optional<DebugFileCacheSettings> settings) {
  g_debug_file_cache.Set(std::move(settings));
}

std::optional<CachedDebugFile> OpenCachedDebugFile(std::string_view build_id) {
  const std::optional<DebugFileCacheSettings> settings = g_debug_file_cache.Get();
  if (!settings || !IsBuildId(build_id)) return std::nullopt;
  const std::string path = CopyPath(*settings, build_id);
  Fd origin_fd = OpenOwnCacheFile(path + kOriginSuffix);
  if (!origin_fd.valid()) return std::nullopt;
  std::string origin = ReadOrigin(origin_fd.get());
  struct stat st {};
  if (origin.empty() || ::stat(origin.c_str(), &st) != 0) return std::nullopt;
  Fd fd = OpenOwnCacheFile(path);
  if (!fd.valid()) return std::nullopt;
  ::futimens(fd.get(), nullptr);
  return CachedDebugFile{std::move(fd), std::move(origin)};
}

void CachePlainCopy(int fd, std::string_view build_id, const std::string& origin) {
  const std::optional<DebugFileCacheSettings> settings = g_debug_file_cache.Get();
  if (!settings || !IsBuildId(build_id) || origin.empty() || origin.find('\n') != origin.npos ||
      !HasCompressedSection(fd) || !UsableCacheDirectory(settings->dir)) {
    return;
  }
  const std::string path = CopyPath(*settings, build_id);
  if (WriteCacheFileAtomically(path + kOriginSuffix,
                               [&](int out) { return WriteAll(out, origin, path).has_value(); }) &&
      WriteCacheFileAtomically(path,
                               [&](int out) { return CopyBytes(fd, out) && Decompress(out); })) {
    TrimCache(settings->dir, ".debug", settings->max_bytes, path,
              [](const std::string& removed) { ::unlink((removed + kOriginSuffix).c_str()); });
  }
}

}  // namespace memprof::report::symbolize
