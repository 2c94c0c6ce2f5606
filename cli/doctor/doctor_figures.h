#ifndef MEMPROF_CLI_DOCTOR_DOCTOR_FIGURES_H_
#define MEMPROF_CLI_DOCTOR_DOCTOR_FIGURES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/client/memory_figures.h"
#include "common/proc_smaps.h"
#include "common/result.h"

namespace memprof::cli {

// jemalloc's own figures beyond the summary, from malloc_stats_print's JSON.
struct JemallocFigures {
  uint64_t dirty_bytes = 0;   // stats.arenas.merged.pdirty x arenas.page
  uint64_t muzzy_bytes = 0;   // stats.arenas.merged.pmuzzy x arenas.page
  uint64_t tcache_bytes = 0;  // stats.arenas.merged.tcache_bytes
  uint32_t arenas = 0;        // arenas.narenas (arenas that exist, used or not)
  uint32_t threads = 0;       // stats.arenas.merged.nthreads (threads bound to an arena)
  // The options (opt.*) that decide how much memory jemalloc keeps.
  int64_t dirty_decay_ms = 0;  // -1: never purged
  int64_t muzzy_decay_ms = 0;
  bool background_thread = false;
  uint32_t narenas = 0;  // opt.narenas: the most arenas it will create
  uint64_t tcache_max = 0;
  bool retain = false;
};

// glibc malloc's figures, from malloc_info()'s XML.
struct GlibcFigures {
  uint32_t arenas = 0;        // <heap> elements
  uint64_t system_bytes = 0;  // <system type="current">: obtained from the OS by the arenas
  uint64_t free_bytes = 0;    // <total type="rest">: free chunks in the bins
  uint64_t fastbin_bytes = 0;  // <total type="fast">: free chunks in the fast bins
  uint64_t mmap_bytes = 0;    // <total type="mmap">: big chunks mmap()ed one by one
  uint64_t mmap_chunks = 0;
};

// gperftools tcmalloc's figures, from its numeric properties (the Stats
// answer's allocator_properties).
struct TcmallocFigures {
  uint64_t page_heap_free_bytes = 0;       // tcmalloc.pageheap_free_bytes: free spans, resident
  uint64_t page_heap_unmapped_bytes = 0;   // tcmalloc.pageheap_unmapped_bytes: given back
  uint64_t central_cache_free_bytes = 0;   // tcmalloc.central_cache_free_bytes
  uint64_t transfer_cache_free_bytes = 0;  // tcmalloc.transfer_cache_free_bytes
  uint64_t thread_cache_bytes = 0;         // tcmalloc.current_total_thread_cache_bytes
  uint64_t max_thread_cache_bytes = 0;     // tcmalloc.max_total_thread_cache_bytes
  bool aggressive_decommit = false;        // tcmalloc.aggressive_memory_decommit
};

// memprof's own sampler, where it serves (an allocator that cannot sample):
// what its samples estimate is live, against the allocator's own allocated
// bytes. Its samples hold only what was allocated since it was switched on,
// so the estimate covers that share of the heap and no more.
struct SamplerFigures {
  bool serves = false;                       // memprof's sampler serves this process
  bool active = false;                       // sampling now
  int64_t since_unix_ms = 0;                 // when it was last switched on; 0: never
  double live_bytes = 0;                     // unsampled live bytes of its samples
  uint64_t dropped = 0;                      // samples its tables had no room for
  std::vector<std::string> not_intercepted;  // what it cannot see (status)
};

enum class AllocatorFamily { kJemalloc, kGlibc, kTcmalloc };

// "jemalloc", "glibc", "tcmalloc".
const char* FamilyName(AllocatorFamily family);

// The heap as doctor watched it: the allocator's summary (and the process's
// RSS) read at the start, the middle and the end of its watch.
struct GrowthFigures {
  std::vector<StatsSample> readings;  // fewer than 2: not watched
};

// What the readings say: the change from the first to the last, per second
// of the measured time, and whether allocated grew between every two.
struct GrowthRate {
  double seconds = 0;
  int64_t allocated_change = 0;
  double allocated_per_second = 0;
  int64_t rss_change = 0;
  double rss_per_second = 0;
  bool steady = false;  // allocated grew from each reading to the next
};
GrowthRate RateOf(const GrowthFigures& growth);

// A change of memory with its sign, "+1.3 MiB" or "-512 B" ("0 B").
std::string SignedBytesText(double bytes);
// "2.0 s".
std::string SecondsText(double seconds);

// Everything `doctor` judges: the process's mappings, its allocator's
// figures, and the CPU count (for advice on arenas).
struct DoctorFigures {
  pid_t pid = 0;
  uint64_t rss_bytes = 0;  // the sum over /proc/<pid>/smaps (= smaps.rss_bytes)
  SmapsBreakdown smaps;
  AllocatorFamily allocator = AllocatorFamily::kJemalloc;
  MemoryFigures summary;  // the Stats summary
  JemallocFigures jemalloc;
  GlibcFigures glibc;
  TcmallocFigures tcmalloc;
  GrowthFigures growth;
  SamplerFigures sampler;
  uint32_t cpus = 1;
};

// The share of the allocator's allocated bytes that memprof's sampler
// estimates live, 0 when either is 0 (not capped: above 1 says the estimate
// is high, by sampling error or memory the allocator does not count).
double SamplerCoveredShare(const DoctorFigures& figures);

// The allocator's resident memory as doctor shows it, one figure throughout:
// its own figure (jemalloc stats.resident, tcmalloc's physical bytes, glibc's
// arenas and mmapped chunks) capped by the anonymous RSS it lives in, since
// the allocator counts pages the kernel may not hold (glibc's figure is
// address space, not RSS).
uint64_t AllocatorResident(const DoctorFigures& figures);

// The parts of the process's RSS, in bytes: allocator memory is
// AllocatorResident(); the anonymous rest is "other".
struct RssParts {
  uint64_t allocator = 0;
  uint64_t thread_stacks = 0;
  uint64_t binaries = 0;
  uint64_t other_files = 0;
  uint64_t shared_memory = 0;
  uint64_t other_anonymous = 0;
};
RssParts PartsOf(const DoctorFigures& figures);

// The ratios doctor reports, each 0 when its denominator is 0.
struct DoctorRatios {
  double fragmentation = 0;   // (active - allocated) / active
  double dirty_share = 0;     // unused pages the allocator keeps / its resident
  double metadata_share = 0;  // metadata / resident
  double unexplained_share = 0;  // other anonymous RSS / RSS
  double stack_share = 0;        // thread stacks / RSS
};
DoctorRatios RatiosOf(const DoctorFigures& figures);

// Unused pages the allocator keeps: jemalloc dirty + muzzy, glibc free in
// bins and fast bins, tcmalloc's page heap free spans.
uint64_t UnusedAllocatorBytes(const DoctorFigures& figures);

// Reads malloc_stats_print("J") output (the agent's raw Stats JSON, with or
// without its {"jemalloc": ...} wrapper). kInternal when a figure is missing.
[[nodiscard]] Result<JemallocFigures> ParseJemallocFigures(const std::string& json);

// Reads tcmalloc's numeric properties; those missing stay 0.
TcmallocFigures ReadTcmallocFigures(const std::map<std::string, uint64_t>& properties);

// Reads glibc malloc_info() XML. kInternal for text that is not such a report.
[[nodiscard]] Result<GlibcFigures> ParseMallocInfo(const std::string& xml);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_DOCTOR_FIGURES_H_
