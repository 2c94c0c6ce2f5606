#include "agent/sampler/live_table.h"

namespace memprof::agent {

bool LiveTable::Init(size_t capacity) {
  size_t rounded = 64;
  while (rounded < capacity) rounded <<= 1;
  MappedRegion region = MappedRegion::Map(rounded * sizeof(Slot));
  MappedRegion filter = MappedRegion::Map((size_t{1} << kFilterBits) * sizeof(filter_[0]));
  if (region.empty() || filter.empty()) return false;
  region_ = static_cast<MappedRegion&&>(region);
  filter_region_ = static_cast<MappedRegion&&>(filter);
  filter_ = static_cast<std::atomic<uint8_t>*>(filter_region_.data());
  // Zeroed pages are valid slots: key kEmpty, size 0, stack 0, record 0.
  slots_ = static_cast<Slot*>(region_.data());
  mask_ = rounded - 1;
  return true;
}

bool LiveTable::Insert(uintptr_t ptr, uint64_t size, uint32_t stack, uint32_t record) {
  if (slots_ == nullptr || ptr < kFirstPointer) return false;
  const size_t home = Home(ptr);
  for (uint32_t probe = 0; probe < kMaxProbe; ++probe) {
    Slot& slot = slots_[(home + probe) & mask_];
    uintptr_t key = slot.key.load(std::memory_order_relaxed);
    if (key != kEmpty && key != kTombstone) continue;
    if (!slot.key.compare_exchange_strong(key, kBusy, std::memory_order_acquire)) continue;
    slot.size.store(size, std::memory_order_relaxed);
    slot.stack.store(stack, std::memory_order_relaxed);
    slot.record.store(record, std::memory_order_relaxed);
    // Counted before the key is published: a free of `ptr` comes after
    // this returns, and so sees the count.
    FilterAdd(ptr);
    slot.key.store(ptr, std::memory_order_release);
    live_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  overflows_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool LiveTable::Take(uintptr_t ptr, uint64_t* size, uint32_t* stack, uint32_t* record) {
  if (slots_ == nullptr) return false;
  if (filter_[Bucket(ptr)].load(std::memory_order_relaxed) == 0) return false;
  uint32_t ignored = 0;
  return TakeFrom(Home(ptr), ptr, size, stack, record != nullptr ? record : &ignored);
}

bool LiveTable::TakeFrom(size_t home, uintptr_t ptr, uint64_t* size, uint32_t* stack,
                         uint32_t* record) {
  // A pointer is inserted once before it is handed out and freed once, so
  // no other thread races us for this key; kBusy slots are other keys.
  for (uint32_t probe = 0; probe < kMaxProbe; ++probe) {
    Slot& slot = slots_[(home + probe) & mask_];
    uintptr_t key = slot.key.load(std::memory_order_acquire);
    if (key == kEmpty) return false;
    if (key != ptr) continue;
    *size = slot.size.load(std::memory_order_relaxed);
    *stack = slot.stack.load(std::memory_order_relaxed);
    *record = slot.record.load(std::memory_order_relaxed);
    if (!slot.key.compare_exchange_strong(key, kTombstone, std::memory_order_acq_rel)) {
      return false;  // cleared by a reset meanwhile
    }
    FilterRemove(ptr);
    live_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void LiveTable::FilterAdd(uintptr_t ptr) {
  std::atomic<uint8_t>& count = filter_[Bucket(ptr)];
  uint8_t seen = count.load(std::memory_order_relaxed);
  while (seen != kFilterSaturated &&
         !count.compare_exchange_weak(seen, static_cast<uint8_t>(seen + 1),
                                      std::memory_order_relaxed)) {
  }
}

void LiveTable::FilterRemove(uintptr_t ptr) {
  std::atomic<uint8_t>& count = filter_[Bucket(ptr)];
  uint8_t seen = count.load(std::memory_order_relaxed);
  // 0: a reset zeroed the filter under a sample still being freed.
  while (seen != kFilterSaturated && seen != 0 &&
         !count.compare_exchange_weak(seen, static_cast<uint8_t>(seen - 1),
                                      std::memory_order_relaxed)) {
  }
}

bool LiveTable::Contains(uintptr_t ptr) const {
  if (slots_ == nullptr || ptr < kFirstPointer) return false;
  const size_t home = Home(ptr);
  for (uint32_t probe = 0; probe < kMaxProbe; ++probe) {
    const uintptr_t key = slots_[(home + probe) & mask_].key.load(std::memory_order_acquire);
    if (key == ptr) return true;
    if (key == kEmpty) return false;
  }
  return false;
}

void LiveTable::Clear() {
  region_.Zero();
  filter_region_.Zero();
  live_.store(0, std::memory_order_relaxed);
  overflows_.store(0, std::memory_order_relaxed);
}

}  // namespace memprof::agent
