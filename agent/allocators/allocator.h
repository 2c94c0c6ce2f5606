#ifndef MEMPROF_AGENT_ALLOCATORS_ALLOCATOR_H_
#define MEMPROF_AGENT_ALLOCATORS_ALLOCATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/allocators/heap_profiler.h"
#include "agent/allocators/heap_summary.h"
#include "common/result.h"

namespace memprof::agent {

class JemallocControl;  // jemalloc_control.h: the jemalloc back-end's own interface

enum class AllocatorKind { kJemalloc, kGlibc, kOther, kTcmalloc };

// What the process allocator is and what it can do, read at one moment.
struct AllocatorInfo {
  AllocatorKind kind = AllocatorKind::kOther;
  std::string version;
  bool profiling_supported = false;  // jemalloc config.prof; tcmalloc: has the sampler
  bool profiling_enabled = false;    // jemalloc opt.prof; tcmalloc: TCMALLOC_SAMPLE_PARAMETER > 0
  bool profiling_active = false;     // jemalloc prof.active; tcmalloc: activated in the agent
  uint64_t sample_interval_bytes = 0;
  // Who samples for heap profiles (StatusResponse.sampler): "jemalloc" or
  // "tcmalloc" where the allocator's own profiler was enabled at start-up,
  // else "memprof" (SamplerHeapProfiler: profiling_active and
  // sample_interval_bytes are then its own).
  std::string sampler;
};

enum class ReportFormat { kJson, kText, kXml };

// An allocator's own report, and the format it is actually in.
struct AllocatorReport {
  ReportFormat format = ReportFormat::kText;
  std::string text;
};

// The process allocator, whichever it is: the interface that the heap and
// the service use. One back-end per file (jemalloc_allocator.h,
// tcmalloc_allocator.h, glibc_allocator.h, other_allocator.h);
// allocator_detection.h picks the one that serves malloc(). Status and Stats
// work for every kind; heap profiles need jemalloc or gperftools' tcmalloc
// (ReadyProfiler()): the allocator's own profiler where it was enabled at
// start-up, memprof's own sampler (SamplerHeapProfiler) for every other;
// peak capture and allocation windows need jemalloc's (Jemalloc() is
// non-null only for jemalloc).
class Allocator {
 public:
  virtual ~Allocator() = default;

  virtual AllocatorInfo Info() const = 0;
  [[nodiscard]] virtual Result<HeapSummary> Summary() const = 0;
  // The allocator's own full report (malloc_stats_print, malloc_info), in
  // `wanted` format when the allocator has it, else in the one it has.
  [[nodiscard]] virtual Result<AllocatorReport> Report(ReportFormat wanted) const = 0;
  virtual const JemallocControl* Jemalloc() const { return nullptr; }
  // The heap profiler: the allocator's own where it can sample, else
  // memprof's own sampler (the default). An Error (kFailedPrecondition, what
  // to do) only where neither can serve.
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

const char* AllocatorKindName(AllocatorKind kind);

// Why an allocator of `kind` cannot take heap profiles: kFailedPrecondition,
// with the restart that would make it able to.
Error NoHeapProfiler(AllocatorKind kind);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_ALLOCATOR_H_
