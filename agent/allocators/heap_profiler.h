#ifndef MEMPROF_AGENT_ALLOCATORS_HEAP_PROFILER_H_
#define MEMPROF_AGENT_ALLOCATORS_HEAP_PROFILER_H_

#include <cstdint>
#include <optional>

#include "common/result.h"

namespace memprof::agent {

// The heap profiler of the process allocator, whichever it is: what the
// profiling controller, the dump streamer and the service use, so that they
// do not know which allocator they talk to. JemallocHeapProfiler drives
// jemalloc's prof.* controls; TcmallocHeapProfiler serves gperftools'
// sampled heap (docs/architecture.md, "Behind the socket"; for a tcmalloc
// process, docs/user-guide.md, "tcmalloc targets (gperftools)").
//
// Thread-safety: every method may be called concurrently.
class HeapProfiler {
 public:
  virtual ~HeapProfiler() = default;

  // Whether allocations are profiled now (jemalloc prof.active).
  virtual bool Active() const = 0;
  // Starts or stops profiling; the previous state.
  [[nodiscard]] virtual Result<bool> SetActive(bool active) = 0;
  // Average bytes between samples; 0 when unknown.
  virtual uint64_t SampleInterval() const = 0;
  // DISCARDS every sample collected so far and sets the sample interval to
  // 2^lg_sample (nullopt: keeps it). kFailedPrecondition where the allocator
  // cannot do that.
  [[nodiscard]] virtual Result<void> Reset(std::optional<unsigned> lg_sample) = 0;
  // Writes a heap profile into the file `fd` (in the calling thread's
  // descriptor table) and checks that it is one; its size in bytes.
  [[nodiscard]] virtual Result<uint64_t> WriteInto(int fd) = 0;
  // What DumpMetadata.format calls the profiles: "jemalloc_heap_v2" or
  // "gperftools_heap".
  virtual const char* Format() const = 0;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_HEAP_PROFILER_H_
