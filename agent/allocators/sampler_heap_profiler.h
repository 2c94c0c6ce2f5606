#ifndef MEMPROF_AGENT_ALLOCATORS_SAMPLER_HEAP_PROFILER_H_
#define MEMPROF_AGENT_ALLOCATORS_SAMPLER_HEAP_PROFILER_H_

#include <cstdint>
#include <mutex>
#include <optional>

#include "agent/allocators/allocator.h"
#include "agent/allocators/heap_profiler.h"

namespace memprof::agent {

// memprof's own sampler (agent/sampler/sampler.h) behind the HeapProfiler
// interface, for allocators that cannot sample by themselves: glibc's and
// other mallocs, jemalloc without opt.prof, tcmalloc without its sampler
//. Its dumps are jemalloc heap_v2 profiles whose header names the
// sample interval, so `report` unsamples them as jemalloc's.
//  - SetActive(true) patches the malloc family's GOT slots and samples;
//    SetActive(false) stops sampling and keeps the samples (the freeing
//    functions stay hooked while samples live, so that they stay true);
//  - Reset drops the samples and, with lg_sample, sets the interval to
//    2^lg_sample (at once if active, else from the next activation);
//  - WriteInto before the first activation is refused (kFailedPrecondition,
//    "run `memprofctl activate` first"), as tcmalloc's is: nothing is mapped
//    or patched in the host until then.
//
// Thread-safety: every method may be called concurrently (the sampler is
// process-wide and thread-safe; mu_ keeps the interval and the activation in
// step).
class SamplerHeapProfiler final : public HeapProfiler {
 public:
  // The sampler's default, jemalloc's: 2^19 bytes.
  static constexpr uint64_t kDefaultInterval = uint64_t{1} << 19;

  SamplerHeapProfiler() = default;
  explicit SamplerHeapProfiler(bool skip_own_module) : skip_own_module_(skip_own_module) {}

  bool Active() const override;
  Result<bool> SetActive(bool active) override;
  uint64_t SampleInterval() const override;
  Result<void> Reset(std::optional<unsigned> lg_sample) override;
  Result<uint64_t> WriteInto(int fd) override;
  const char* Format() const override { return "jemalloc_heap_v2"; }

 private:
  [[nodiscard]] Result<void> ActivateLocked();

  // The unit tests link the sampler into their executable and turn this off,
  // so that it patches the executable too (SamplerOptions::skip_own_module).
  const bool skip_own_module_ = true;
  mutable std::mutex mu_;
  uint64_t interval_ = kDefaultInterval;  // guarded by mu_
  bool active_ = false;                   // guarded by mu_
};

// The process's one memprof sampler profiler, the heap profiler of every
// allocator that cannot sample by itself (Allocator::ReadyProfiler). Made on
// first use and never destroyed: a thread may be in the sampler's hooks at
// any time after an activation, at exit too.
SamplerHeapProfiler& MemprofSampler();

// What AllocatorInfo says of an allocator that memprof's sampler serves:
// sampler "memprof", its activation and its interval; the allocator's own
// profiling facts are left as they are.
void DescribeMemprofSampler(AllocatorInfo& info);

// Whether memprof's sampler is `allocator`'s heap profiler (ReadyProfiler()).
bool MemprofSamplerServes(const Allocator& allocator);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_SAMPLER_HEAP_PROFILER_H_
