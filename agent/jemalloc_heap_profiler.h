#ifndef MEMPROF_AGENT_JEMALLOC_HEAP_PROFILER_H_
#define MEMPROF_AGENT_JEMALLOC_HEAP_PROFILER_H_

#include "agent/heap_profiler.h"
#include "agent/jemalloc_control.h"

namespace memprof::agent {

// jemalloc's own profiler: prof.active, prof.reset and prof.dump (into the
// file through /proc/thread-self/fd, so jemalloc writes it directly).
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

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_JEMALLOC_HEAP_PROFILER_H_
