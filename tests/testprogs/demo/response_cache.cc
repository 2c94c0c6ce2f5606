#include "tests/testprogs/demo/response_cache.h"

#include <cstring>
#include <functional>
#include <utility>

namespace demo {

ResponseCache::ResponseCache(std::size_t capacity) : slots_(capacity == 0 ? 1 : capacity) {}

// malloc rather than `new` throughout the demo: Debian's libjemalloc.so.2 is
// stripped, and jeprof names its internal operator-new frames after the nearest
// exported symbol (malloc_usable_size) instead of the caller we want to show.
void ResponseCache::Insert(std::string_view key, std::string_view body) {
  Body copy(static_cast<char*>(std::malloc(body.size())));
  if (copy == nullptr) return;  // Caching is optional; skip under memory pressure.
  std::memcpy(copy.get(), body.data(), body.size());
  std::uint64_t key_hash = std::hash<std::string_view>{}(key);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slots_[key_hash % slots_.size()];
    size_bytes_ = size_bytes_ - slot.size + body.size();
    slot.key_hash = key_hash;
    slot.size = body.size();
    std::swap(slot.body, copy);
  }
  // `copy` now owns the evicted body and frees it outside the lock.
}

std::size_t ResponseCache::size_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return size_bytes_;
}

}  // namespace demo
