#include "agent/sampler/recent_ring.h"

#include <time.h>

#include <cstring>

namespace memprof::agent {

uint64_t RecentClockNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

bool RecentRing::Begin(size_t capacity) {
  if (capacity == 0) return false;
  MappedRegion region = MappedRegion::Map(capacity * sizeof(RecentRecord));
  if (region.empty()) return false;
  region_ = static_cast<MappedRegion&&>(region);
  records_ = static_cast<RecentRecord*>(region_.data());
  capacity_ = capacity;
  first_seq_ = next_seq_;
  dropped_ = false;
  return true;
}

void RecentRing::End() {
  region_ = MappedRegion();
  records_ = nullptr;
  capacity_ = 0;
  dropped_ = false;
}

void RecentRing::Restart() {
  if (records_ == nullptr) return;
  region_.Zero();
  dropped_ = dropped_ || next_seq_ != first_seq_;
  first_seq_ = next_seq_;
}

uint32_t RecentRing::Append(uint64_t size, uint32_t stack, uint32_t tid, uint64_t now_ns) {
  if (records_ == nullptr) return 0;
  const uint32_t seq = next_seq_++;
  *Slot(seq) = RecentRecord{seq, stack, tid, 0, size, now_ns, 0};
  return seq;
}

void RecentRing::Release(uint32_t seq, uint32_t tid, uint64_t now_ns) {
  if (records_ == nullptr || seq < first_seq_ || seq >= next_seq_) return;
  RecentRecord* r = Slot(seq);
  if (r->seq != seq) return;  // overwritten by a newer record
  r->dalloc_tid = tid == 0 ? 1 : tid;
  r->dalloc_ns = now_ns;
}

uint64_t RecentRing::count() const {
  const uint64_t n = appended();
  return n < capacity_ ? n : capacity_;
}

uint64_t RecentRing::CopyOut(RecentRecord* out) const {
  const uint64_t n = count();
  if (n == 0) return 0;
  const auto oldest = static_cast<uint32_t>(next_seq_ - n);
  const size_t start = (oldest - first_seq_) % capacity_;
  const size_t first_part = capacity_ - start < n ? capacity_ - start : n;
  std::memcpy(out, records_ + start, first_part * sizeof(RecentRecord));
  std::memcpy(out + first_part, records_, (n - first_part) * sizeof(RecentRecord));
  return n;
}

}  // namespace memprof::agent
