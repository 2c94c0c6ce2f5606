#include "agent/heap/state_changes.h"

#include <utility>

namespace memprof::agent {

uint64_t StateChanges::Subscribe(Listener listener) {
  std::lock_guard lock(mu_);
  listeners_.emplace(++last_id_, std::move(listener));
  return last_id_;
}

void StateChanges::Unsubscribe(uint64_t id) {
  std::lock_guard lock(mu_);
  listeners_.erase(id);
}

void StateChanges::Changed() {
  std::lock_guard lock(mu_);
  for (auto& [id, listener] : listeners_) listener();
}

}  // namespace memprof::agent
