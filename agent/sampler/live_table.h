#ifndef MEMPROF_AGENT_SAMPLER_LIVE_TABLE_H_
#define MEMPROF_AGENT_SAMPLER_LIVE_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/sampler/mapped_region.h"

namespace memprof::agent {

// The sampled allocations still alive: pointer -> size, stack id and the
// allocation window's record of it (recent_ring.h; 0: none), in a
// fixed array of atomic slots (open addressing, linear probing, at most
// kMaxProbe slots per key) mapped once and never grown, so nothing here
// allocates. free() asks it about every pointer, nearly all unsampled, so
// Erase's common case is one hash and one relaxed load from a 64 KiB
// counting filter (how many live samples hash to each of 64 Ki buckets),
// which stays in the cache where the 3 MiB of slots would not: a host's
// frees land on random slots, and a miss there costs more than the rest of
// the hook.
// An insert that finds no free slot within the probe window is counted in
// overflows() and dropped: the profile misses that sample, the host goes on.
//
// Thread-safety: Insert, Erase and Take may run concurrently from any
// thread (lock-free); ForEach may run beside them and sees each slot either
// before or after a change. Clear only while nothing else writes.
class LiveTable {
 public:
  static constexpr uint32_t kMaxProbe = 32;

  // Maps `capacity` slots (rounded up to a power of two); false if mmap fails.
  bool Init(size_t capacity);
  bool ready() const { return slots_ != nullptr; }
  size_t capacity() const { return mask_ + 1; }

  // Records a sampled allocation; false (and counted) when full.
  bool Insert(uintptr_t ptr, uint64_t size, uint32_t stack, uint32_t record = 0);
  // Forgets `ptr` if it was sampled; its window record, or 0 (not sampled,
  // or sampled outside a window). Inline: this is free()'s hot path.
  uint32_t Erase(uintptr_t ptr) {
    if (slots_ == nullptr) return 0;
    if (filter_[Bucket(ptr)].load(std::memory_order_relaxed) == 0) return 0;
    uint64_t size;
    uint32_t stack;
    uint32_t record = 0;
    TakeFrom(Home(ptr), ptr, &size, &stack, &record);
    return record;
  }
  // Forgets `ptr` and says what it was (for realloc, which may fail and keep
  // the block); false if it was not sampled.
  bool Take(uintptr_t ptr, uint64_t* size, uint32_t* stack, uint32_t* record = nullptr);
  // Whether `ptr` is a live sample.
  bool Contains(uintptr_t ptr) const;
  // Calls fn(ptr, size, stack) for every live sample.
  template <typename Fn>
  void ForEach(Fn&& fn) const;
  void Clear();

  uint64_t live() const { return live_.load(std::memory_order_relaxed); }
  uint64_t overflows() const { return overflows_.load(std::memory_order_relaxed); }

 private:
  // Keys below kFirstPointer are states, not pointers (no allocation lives
  // in the first page).
  static constexpr uintptr_t kEmpty = 0;
  static constexpr uintptr_t kBusy = 1;  // claimed, size and stack being written
  static constexpr uintptr_t kTombstone = 2;
  static constexpr uintptr_t kFirstPointer = 4096;

  struct Slot {
    std::atomic<uintptr_t> key;
    std::atomic<uint64_t> size;
    std::atomic<uint32_t> stack;
    std::atomic<uint32_t> record;  // in the padding: a slot stays 24 bytes
  };

  static constexpr int kFilterBits = 16;
  // A bucket's count stops here and never comes down: a false positive.
  static constexpr uint8_t kFilterSaturated = 255;

  size_t Home(uintptr_t ptr) const {
    // Fibonacci hashing of the pointer without its alignment bits.
    return static_cast<size_t>(((ptr >> 4) * 0x9E3779B97F4A7C15ULL) >> 20) & mask_;
  }
  static size_t Bucket(uintptr_t ptr) {
    return static_cast<size_t>(((ptr >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - kFilterBits));
  }
  void FilterAdd(uintptr_t ptr);
  void FilterRemove(uintptr_t ptr);
  bool TakeFrom(size_t home, uintptr_t ptr, uint64_t* size, uint32_t* stack, uint32_t* record);

  MappedRegion region_;
  MappedRegion filter_region_;
  Slot* slots_ = nullptr;
  std::atomic<uint8_t>* filter_ = nullptr;
  size_t mask_ = 0;
  std::atomic<uint64_t> live_{0};
  std::atomic<uint64_t> overflows_{0};
};

template <typename Fn>
void LiveTable::ForEach(Fn&& fn) const {
  if (slots_ == nullptr) return;
  for (size_t i = 0; i <= mask_; ++i) {
    const uintptr_t key = slots_[i].key.load(std::memory_order_acquire);
    if (key < kFirstPointer) continue;
    const uint64_t size = slots_[i].size.load(std::memory_order_relaxed);
    const uint32_t stack = slots_[i].stack.load(std::memory_order_relaxed);
    // Freed (and maybe reused) while we read: skip rather than mix two.
    if (slots_[i].key.load(std::memory_order_acquire) != key) continue;
    fn(key, size, stack);
  }
}

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_LIVE_TABLE_H_
