#include "cli/report/symbolize/symbol_index_cache.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cstring>
#include <functional>
#include <utility>

#include "cli/report/symbolize/cache_files.h"
#include "common/fd.h"

namespace memprof::report::symbolize {
namespace {

CacheSetting<SymbolIndexCacheSettings> g_symbol_index_cache;

constexpr char kSuffix[] = ".symidx";
constexpr char kMagic[8] = {'m', 'p', 's', 'y', 'm', 'i', 'd', 'x'};
// The layout's version: a file of another is not read (and is replaced).
constexpr uint32_t kVersion = 1;

// A file: this header, then the sized entries, then the sizeless ones.
// Native byte order: the cache is this machine's.
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t entry_bytes;
  uint64_t symbols;  // the table's size, which names the file too
  uint64_t sized;
  uint64_t sizeless;
  uint64_t checksum;  // of the entries' bytes
};

std::string PathFor(const SymbolIndexCacheSettings& settings, std::string_view build_id,
                    int symbols) {
  return settings.dir + "/" + std::string(build_id) + "-" + std::to_string(symbols) + kSuffix;
}

uint64_t Checksum(std::span<const IndexEntry> sized, std::span<const IndexEntry> sizeless) {
  const auto bytes = [](std::span<const IndexEntry> entries) {
    return std::string_view(reinterpret_cast<const char*>(entries.data()), entries.size_bytes());
  };
  const std::hash<std::string_view> hash;
  return hash(bytes(sized)) * 31 + hash(bytes(sizeless));
}

// The header of a mapped file of `size` bytes if it is one of ours for a
// table of `symbols` symbols, whole and unchanged.
const FileHeader* SoundHeader(const void* data, uint64_t size, int symbols) {
  if (size < sizeof(FileHeader)) return nullptr;
  const auto* header = static_cast<const FileHeader*>(data);
  if (std::memcmp(header->magic, kMagic, sizeof(kMagic)) != 0 || header->version != kVersion ||
      header->entry_bytes != sizeof(IndexEntry) ||
      header->symbols != static_cast<uint64_t>(symbols) || header->sized > header->symbols ||
      header->sizeless > header->symbols - header->sized ||
      size != sizeof(FileHeader) + (header->sized + header->sizeless) * sizeof(IndexEntry)) {
    return nullptr;
  }
  return header;
}

}  // namespace

std::optional<std::string> DefaultSymbolIndexCacheDir() {
  return DefaultCacheDir("symbol-indexes");
}

void SetSymbolIndexCache(std::optional<SymbolIndexCacheSettings> settings) {
  g_symbol_index_cache.Set(std::move(settings));
}

std::optional<CachedSymbolIndex> ReadCachedSymbolIndex(std::string_view build_id, int symbols) {
  const std::optional<SymbolIndexCacheSettings> settings = g_symbol_index_cache.Get();
  if (!settings || !IsBuildId(build_id) || symbols <= 0) return std::nullopt;
  Fd fd = OpenOwnCacheFile(PathFor(*settings, build_id, symbols));
  if (!fd.valid()) return std::nullopt;
  const Result<uint64_t> size = FileSize(fd.get());
  if (!size || *size < sizeof(FileHeader)) return std::nullopt;
  // Populated at once: the page cache's pages, mapped without a fault each.
  void* data = ::mmap(nullptr, *size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (data == MAP_FAILED) return std::nullopt;
  const uint64_t length = *size;
  std::shared_ptr<const void> mapping(
      data, [length](const void* p) { ::munmap(const_cast<void*>(p), length); });
  const FileHeader* header = SoundHeader(data, length, symbols);
  if (header == nullptr) return std::nullopt;
  const auto* entries = reinterpret_cast<const IndexEntry*>(header + 1);
  CachedSymbolIndex cached{
      mapping, {entries, header->sized}, {entries + header->sized, header->sizeless}};
  if (Checksum(cached.sized, cached.sizeless) != header->checksum) return std::nullopt;
  ::futimens(fd.get(), nullptr);
  return cached;
}

void CacheSymbolIndex(std::string_view build_id, int symbols, std::span<const IndexEntry> sized,
                      std::span<const IndexEntry> sizeless) {
  const std::optional<SymbolIndexCacheSettings> settings = g_symbol_index_cache.Get();
  if (!settings || !IsBuildId(build_id) || symbols <= 0 || !UsableCacheDirectory(settings->dir)) {
    return;
  }
  FileHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.version = kVersion;
  header.entry_bytes = sizeof(IndexEntry);
  header.symbols = static_cast<uint64_t>(symbols);
  header.sized = sized.size();
  header.sizeless = sizeless.size();
  header.checksum = Checksum(sized, sizeless);
  const auto bytes = [](const void* data, size_t size) {
    return std::string_view(static_cast<const char*>(data), size);
  };
  const std::string path = PathFor(*settings, build_id, symbols);
  const bool written = WriteCacheFileAtomically(path, [&](int out) {
    return WriteAll(out, bytes(&header, sizeof(header)), path).has_value() &&
           WriteAll(out, bytes(sized.data(), sized.size_bytes()), path).has_value() &&
           WriteAll(out, bytes(sizeless.data(), sizeless.size_bytes()), path).has_value();
  });
  if (written) TrimCache(settings->dir, kSuffix, settings->max_bytes, path);
}

}  // namespace memprof::report::symbolize
