#include "tests/testprogs/demo/session_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace demo {

SessionRegistry::SessionRegistry(std::size_t cap_bytes) : cap_bytes_(cap_bytes) {}

SessionRegistry::~SessionRegistry() {
  while (sessions_ != nullptr) {
    Session* next = sessions_->next;
    std::free(sessions_);
    sessions_ = next;
  }
}

void SessionRegistry::LeakSession(std::string_view user) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (leaked_bytes_.load(std::memory_order_relaxed) >= cap_bytes_) {
    if (!cap_reported_) {
      std::fprintf(stderr, "memprof-demo: the session leak reached its %zu MiB cap; not growing\n",
                   cap_bytes_ >> 20);
      cap_reported_ = true;
    }
    return;
  }
  // malloc + placement new: see ResponseCache::Insert for why not plain `new`.
  void* memory = std::malloc(sizeof(Session));
  if (memory == nullptr) return;
  auto* session = new (memory) Session;
  session->id = next_id_++;
  std::copy_n(user.begin(), std::min(user.size(), session->state.size()), session->state.begin());
  session->next = sessions_;
  sessions_ = session;
  leaked_bytes_.fetch_add(sizeof(Session), std::memory_order_relaxed);
}

}  // namespace demo
