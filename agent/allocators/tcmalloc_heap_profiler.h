#ifndef MEMPROF_AGENT_ALLOCATORS_TCMALLOC_HEAP_PROFILER_H_
#define MEMPROF_AGENT_ALLOCATORS_TCMALLOC_HEAP_PROFILER_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "agent/allocators/heap_profiler.h"
#include "agent/allocators/tcmalloc_control.h"

namespace memprof::agent {

// gperftools' sampled heap (MallocExtension::GetHeapSample) behind memprof's
// activation. tcmalloc samples from start-up on when TCMALLOC_SAMPLE_PARAMETER
// is set, and cannot start or stop later; so activation is the agent's:
//  - active: a dump is tcmalloc's sample of the live heap, taken then;
//  - deactivated: the agent takes one sample as it deactivates and keeps it
//    in memory (up to kMaxFrozenBytes), and dumps serve that one, so that
//    nothing collected is lost and nothing allocated after deactivation shows;
//  - never activated: a dump is refused (kFailedPrecondition, with the hint).
// The sample period is fixed at start-up, so Reset is refused.
class TcmallocHeapProfiler final : public HeapProfiler {
 public:
  // The largest sample kept at deactivation; a larger one is dropped (and
  // dumps say so) rather than held in the host's memory.
  static constexpr size_t kMaxFrozenBytes = 64 * 1024 * 1024;

  explicit TcmallocHeapProfiler(const TcmallocControl& tcmalloc) : tcmalloc_(tcmalloc) {}

  bool Active() const override;
  Result<bool> SetActive(bool active) override;
  uint64_t SampleInterval() const override { return tcmalloc_.SamplePeriod(); }
  Result<void> Reset(std::optional<unsigned> lg_sample) override;
  Result<uint64_t> WriteInto(int fd) override;
  const char* Format() const override { return "gperftools_heap"; }

 private:
  [[nodiscard]] Result<bool> Activate();
  [[nodiscard]] Result<bool> Deactivate();
  // What a dump serves now: a fresh sample, the frozen one, or why none.
  Result<std::shared_ptr<const std::string>> CurrentProfile() const;

  const TcmallocControl& tcmalloc_;
  mutable std::mutex mu_;
  bool active_ = false;          // guarded by mu_
  bool ever_activated_ = false;  // guarded by mu_
  std::shared_ptr<const std::string> frozen_;  // guarded by mu_; null while active
  bool frozen_dropped_ = false;                // guarded by mu_
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_TCMALLOC_HEAP_PROFILER_H_
