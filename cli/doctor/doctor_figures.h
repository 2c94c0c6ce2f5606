#ifndef MEMPROF_CLI_DOCTOR_DOCTOR_FIGURES_H_
#define MEMPROF_CLI_DOCTOR_DOCTOR_FIGURES_H_

#include <cstdint>
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

enum class AllocatorFamily { kJemalloc, kGlibc };

// Everything `doctor` judges: the process's mappings, its allocator's
// figures, and the CPU count (for advice on arenas).
struct DoctorFigures {
  pid_t pid = 0;
  uint64_t rss_bytes = 0;  // /proc/<pid>/smaps_rollup
  SmapsBreakdown smaps;
  AllocatorFamily allocator = AllocatorFamily::kJemalloc;
  MemoryFigures summary;  // the Stats summary
  JemallocFigures jemalloc;
  GlibcFigures glibc;
  uint32_t cpus = 1;
};

// The parts of the process's RSS, in bytes. Allocator memory is the
// allocator's resident figure, capped by the anonymous RSS it lives in (glibc's
// figure is address space, not RSS); the anonymous rest is "other".
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
// bins and fast bins.
uint64_t UnusedAllocatorBytes(const DoctorFigures& figures);

// Reads malloc_stats_print("J") output (the agent's raw Stats JSON, with or
// without its {"jemalloc": ...} wrapper). kInternal when a figure is missing.
[[nodiscard]] Result<JemallocFigures> ParseJemallocFigures(const std::string& json);

// Reads glibc malloc_info() XML. kInternal for text that is not such a report.
[[nodiscard]] Result<GlibcFigures> ParseMallocInfo(const std::string& xml);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_DOCTOR_FIGURES_H_
