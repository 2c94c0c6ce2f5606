#ifndef MEMPROF_AGENT_SAMPLER_RECENT_RING_H_
#define MEMPROF_AGENT_SAMPLER_RECENT_RING_H_

#include <cstddef>
#include <cstdint>

#include "agent/sampler/mapped_region.h"

namespace memprof::agent {

// The records' clock: CLOCK_MONOTONIC, in ns (an allocation profile's
// `clock: monotonic`).
uint64_t RecentClockNs();

// One sampled allocation of an allocation window, and its free if it came.
struct RecentRecord {
  uint32_t seq;         // 0: an empty slot
  uint32_t stack;       // StackTable id
  uint32_t alloc_tid;
  uint32_t dalloc_tid;  // 0: not freed yet
  uint64_t size;        // requested bytes
  uint64_t alloc_ns;    // CLOCK_MONOTONIC
  uint64_t dalloc_ns;
};

// The sampler's record of recent allocations, as jemalloc's
// experimental.prof_recent keeps it: the sampled allocations of an open
// allocation window, oldest first, in a ring of fixed size mapped when the
// window opens and unmapped when it ends. When the ring is full the newest
// record takes the oldest one's slot, and lost() says so.
//
// A record is named by its sequence number, which the live table keeps
// beside the sample so that its free finds it; numbers are never reused
// while the process lives (2^32 samples: at the default interval, 2 PiB
// allocated), so a free of a sample from an earlier window, or of one whose
// slot was taken, finds nothing.
//
// Thread-safety: none; the sampler calls it under its sample lock.
class RecentRing {
 public:
  // Maps room for `capacity` records and starts recording; false if mmap
  // fails (nothing changes then).
  bool Begin(size_t capacity);
  // Stops recording and unmaps the records.
  void End();
  // Drops the records held and goes on recording (the sampler's reset drops
  // the stacks they name); lost() says so from then on.
  void Restart();
  bool recording() const { return records_ != nullptr; }
  size_t capacity() const { return capacity_; }

  // Records an allocation; its number, or 0 when not recording.
  uint32_t Append(uint64_t size, uint32_t stack, uint32_t tid, uint64_t now_ns);
  // Records the free of record `seq`, if the ring still holds it.
  void Release(uint32_t seq, uint32_t tid, uint64_t now_ns);

  // The records held, and whether older ones were overwritten.
  uint64_t count() const;
  bool lost() const { return dropped_ || appended() > capacity_; }
  // Copies the records held, oldest first, into `out` (room for count());
  // their number.
  uint64_t CopyOut(RecentRecord* out) const;

 private:
  uint64_t appended() const { return recording() ? uint64_t{next_seq_ - first_seq_} : 0; }
  RecentRecord* Slot(uint32_t seq) const { return &records_[(seq - first_seq_) % capacity_]; }

  MappedRegion region_;
  RecentRecord* records_ = nullptr;
  size_t capacity_ = 0;
  uint32_t next_seq_ = 1;   // never reset (see above)
  uint32_t first_seq_ = 1;  // the window's first
  bool dropped_ = false;    // Restart dropped records of this window
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_RECENT_RING_H_
