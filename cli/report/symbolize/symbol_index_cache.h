#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_CACHE_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cli/report/symbolize/symbol_index.h"

namespace memprof::report::symbolize {

// The sorted entries of big symbol tables (SymbolIndex), one file per
// build ID and table size: <dir>/<build-id>-<symbols>.symidx. libLLVM's
// 45,000 symbols took 8 ms to read and sort in every report; the file is
// mapped as it is. What a file holds is checked against a checksum when
// read, and each symbol a lookup finds against the module's own table.
struct SymbolIndexCacheSettings {
  std::string dir;                           // <cache>/memprof/symbol-indexes, made 0700
  uint64_t max_bytes = uint64_t{256} << 20;  // the least recently used go beyond this
};

// The default place: $XDG_CACHE_HOME/memprof/symbol-indexes, else
// $HOME/.cache/memprof/symbol-indexes; nullopt when neither is set.
std::optional<std::string> DefaultSymbolIndexCacheDir();

// Sets the process-wide cache (nullopt: none, every table read afresh).
// The symbolizing threads read it; set it before they start.
void SetSymbolIndexCache(std::optional<SymbolIndexCacheSettings> settings);

// Tables smaller than this are read afresh: a file costs more than they do.
inline constexpr int kMinCachedSymbols = 4096;

// A cached index: its entries, valid while `mapping` lives.
struct CachedSymbolIndex {
  std::shared_ptr<const void> mapping;
  std::span<const IndexEntry> sized;
  std::span<const IndexEntry> sizeless;
};

// The cache's index of the table of `symbols` symbols of the module with
// build ID `build_id` (hex), if it has a sound one; its time is set to now,
// which is what the bound removes by.
std::optional<CachedSymbolIndex> ReadCachedSymbolIndex(std::string_view build_id, int symbols);

// Writes the index into the cache for the next reports. Never fails louder
// than not writing it: a cache is an optimisation.
void CacheSymbolIndex(std::string_view build_id, int symbols, std::span<const IndexEntry> sized,
                      std::span<const IndexEntry> sizeless);

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_SYMBOL_INDEX_CACHE_H_
