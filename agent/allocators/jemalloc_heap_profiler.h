#ifndef MEMPROF_AGENT_ALLOCATORS_JEMALLOC_HEAP_PROFILER_H_
#define MEMPROF_AGENT_ALLOCATORS_JEMALLOC_HEAP_PROFILER_H_

#include "agent/allocators/heap_profiler.h"
#include "agent/allocators/jemalloc_control.h"

namespace memprof::agent {

// jemalloc's own profiler: prof.active, prof.reset and prof.dump (into the
// file through /proc/thread-self/fd, so jemalloc writes it directly), in
// jemalloc's heap_v2 format.
class JemallocHeapProfiler final : public HeapProfiler {
 public:
  explicit JemallocHeapProfiler(const JemallocControl& jemalloc) : jemalloc_(jemalloc) {}

  bool Active() const override { return jemalloc_.ProfilingActive(); }
  Result<bool> SetActive(bool active) override { return jemalloc_.SetActive(active); }
  uint64_t SampleInterval() const override { return jemalloc_.SampleInterval(); }
  Result<void> Reset(std::optional<unsigned> lg_sample) override {
    return jemalloc_.Reset(lg_sample);
  }
  Result<uint64_t> WriteInto(int fd) override;
  const char* Format() const override { return "jemalloc_heap_v2"; }

 private:
  const JemallocControl& jemalloc_;
};

// Has jemalloc write a heap profile into the file `fd` (prof.dump through
// /proc/thread-self/fd, so `fd` must be in the calling thread's table) and
// checks that it is a heap_v2 profile; its size.
[[nodiscard]] Result<uint64_t> WriteProfileInto(const JemallocControl& jemalloc, int fd);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_JEMALLOC_HEAP_PROFILER_H_
