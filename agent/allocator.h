#ifndef MEMPROF_AGENT_ALLOCATOR_H_
#define MEMPROF_AGENT_ALLOCATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/heap_profiler.h"
#include "agent/jemalloc_control.h"
#include "common/result.h"

namespace memprof::agent {

enum class AllocatorKind { kJemalloc, kGlibc, kOther, kTcmalloc };

// What the process allocator is and what it can do, read at one moment.
struct AllocatorInfo {
  AllocatorKind kind = AllocatorKind::kOther;
  std::string version;
  bool profiling_supported = false;  // jemalloc config.prof; tcmalloc: has the sampler
  bool profiling_enabled = false;    // jemalloc opt.prof; tcmalloc: TCMALLOC_SAMPLE_PARAMETER > 0
  bool profiling_active = false;     // jemalloc prof.active; tcmalloc: activated in the agent
  uint64_t sample_interval_bytes = 0;
};

enum class ReportFormat { kJson, kText, kXml };

// An allocator's own report, and the format it is actually in.
struct AllocatorReport {
  ReportFormat format = ReportFormat::kText;
  std::string text;
};

// The process allocator, whichever it is. Status and Stats work for every
// kind; heap profiling needs jemalloc (Jemalloc() is non-null only then).
class Allocator {
 public:
  virtual ~Allocator() = default;

  virtual AllocatorInfo Info() const = 0;
  [[nodiscard]] virtual Result<HeapSummary> Summary() const = 0;
  // The allocator's own full report (malloc_stats_print, malloc_info), in
  // `wanted` format when the allocator has it, else in the one it has.
  [[nodiscard]] virtual Result<AllocatorReport> Report(ReportFormat wanted) const = 0;
  virtual const JemallocControl* Jemalloc() const { return nullptr; }
  // The heap profiler if this allocator can take heap profiles now, or a
  // kFailedPrecondition Error that says why not and what to do.
  [[nodiscard]] virtual Result<HeapProfiler*> ReadyProfiler() const;
  // The allocator's own figures by name, beyond the summary (tcmalloc: its
  // numeric properties); empty for allocators that have none.
  virtual std::vector<std::pair<std::string, uint64_t>> Properties() const { return {}; }
  // Unused pages the allocator holds and could give back to the OS, in bytes
  // (jemalloc: dirty + muzzy pages; glibc: free bytes in its arenas).
  [[nodiscard]] virtual Result<uint64_t> UnusedBytes() const = 0;
  // Gives unused pages back to the OS now; `PurgeMethod()` names how.
  [[nodiscard]] virtual Result<void> Purge() const = 0;
  virtual const char* PurgeMethod() const = 0;
};

// The memory of the process at one moment, around a purge.
struct MemoryReading {
  uint64_t rss_bytes = 0;
  HeapSummary summary;
  uint64_t unused_bytes = 0;
};

struct PurgeOutcome {
  MemoryReading before;
  MemoryReading after;
  std::string method;
};

// Reads the process's memory, purges the allocator and reads it again.
[[nodiscard]] Result<PurgeOutcome> PurgeAndMeasure(const Allocator& allocator);

// Detects the allocator serving malloc() in this process: jemalloc when
// JemallocControl::Detect() finds it, tcmalloc when TcmallocControl::Detect()
// does, glibc when malloc comes from libc,
// otherwise kOther (summary and report unavailable).
std::unique_ptr<Allocator> DetectAllocator();

const char* AllocatorKindName(AllocatorKind kind);

// The jemalloc control of an allocator that can take heap profiles now, or a
// kFailedPrecondition Error that says why not and what to do: not jemalloc,
// jemalloc without profiling support, or profiling not enabled at start-up.
[[nodiscard]] Result<const JemallocControl*> RequireHeapProfiling(const Allocator& allocator);

// allocator.ReadyProfiler(): the heap profiler of whichever allocator it is
// (jemalloc or tcmalloc), or why heap profiles cannot be taken.
[[nodiscard]] inline Result<HeapProfiler*> RequireHeapProfiler(const Allocator& allocator) {
  return allocator.ReadyProfiler();
}

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATOR_H_
