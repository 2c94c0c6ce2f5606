#ifndef MEMPROF_AGENT_HEAP_RECENT_ALLOCATIONS_H_
#define MEMPROF_AGENT_HEAP_RECENT_ALLOCATIONS_H_

#include <cstdint>
#include <memory>

#include "agent/allocators/allocator.h"
#include "agent/heap/allocation_profile_writer.h"
#include "common/result.h"

namespace memprof::agent {

// What an allocation window records into, one per window: jemalloc's
// record of recent allocations (experimental.prof_recent), or memprof's
// sampler's ring (agent/sampler/recent_ring.h) where memprof samples. Both
// dump the same JSON, so the profile and `report` do not tell them apart
// but by the header's clock.
class RecentAllocations {
 public:
  virtual ~RecentAllocations() = default;

  // Empties the record and bounds it at `bound` records from now on.
  [[nodiscard]] virtual Result<void> Start(int64_t bound) = 0;
  // Puts back what Start found (which frees the records).
  virtual void Stop() = 0;
  struct Count {
    int64_t records = 0;
    bool lost = false;  // the bound was reached: the oldest records are gone
  };
  // How many records are held now. jemalloc's costs a dump of them all
  // (RecordCounter), the sampler's nothing.
  [[nodiscard]] virtual Result<Count> Held() const = 0;
  // The records as jemalloc 5.3's experimental.prof_recent.alloc_dump writes
  // them, handed to `write` in pieces.
  [[nodiscard]] virtual Result<void> Dump(JemallocControl::WriteCb write, void* opaque) const = 0;
  virtual ProfClock Clock() const = 0;
  virtual uint64_t SampleInterval() const = 0;
  // Whether allocations are sampled now (else the window turns sampling on).
  virtual bool SamplingActive() const = 0;
};

// The record the process's heap profiler has: jemalloc's where jemalloc
// profiles, the sampler's where memprof samples. kFailedPrecondition where
// neither (a tcmalloc that samples by itself, a jemalloc that cannot).
[[nodiscard]] Result<std::unique_ptr<RecentAllocations>> RecentAllocationsOf(
    const Allocator& allocator);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_RECENT_ALLOCATIONS_H_
