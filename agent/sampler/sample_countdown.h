#ifndef MEMPROF_AGENT_SAMPLER_SAMPLE_COUNTDOWN_H_
#define MEMPROF_AGENT_SAMPLER_SAMPLE_COUNTDOWN_H_

#include <cstddef>
#include <cstdint>

namespace memprof::agent {

// jemalloc's sampling, per thread: the bytes allocated form a Poisson
// process whose mean gap is the sample interval. Each thread counts down the
// bytes left until its next sample; the allocation that reaches zero is
// sampled and a new gap is drawn from an exponential distribution with its
// own PRNG. So the unsampled path is one subtraction and one compare on
// thread-local memory: no lock, no atomic. A sampled allocation of s bytes
// is kept with its real size; `report` unsamples it as jeprof does, scaling
// by 1 / (1 - exp(-s / interval)), which is right for exactly this process.
//
// Plain data so that a thread_local of it needs no constructor (zero is "not
// seeded yet"). Not thread-safe: one per thread.
struct SampleCountdown {
  int64_t bytes_until_sample = 0;
  uint64_t rng = 0;

  // Whether the allocation of `size` bytes is to be sampled; `mean` is the
  // sample interval in bytes. Inline: this is the hook's whole hot path.
  bool Account(size_t size, uint64_t mean) {
    bytes_until_sample -= static_cast<int64_t>(size);
    if (bytes_until_sample > 0) return false;
    return Crossed(mean);
  }

  // The countdown reached zero: draws the next gap. A thread's first
  // allocation seeds the PRNG and draws its first gap.
  bool Crossed(uint64_t mean);
  // The next gap: -ln(u) * mean for u uniform in (0, 1], at least 1 byte.
  int64_t NextGap(uint64_t mean);
  void Seed(uint64_t seed);
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_SAMPLE_COUNTDOWN_H_
