#include "agent/heap/dump_queue.h"

#include <algorithm>
#include <string>
#include <utility>

namespace memprof::agent {

DumpSlot& DumpSlot::operator=(DumpSlot&& other) noexcept {
  if (this != &other) {
    Release();
    queue_ = std::move(other.queue_);
  }
  return *this;
}

void DumpSlot::Release() {
  // Moved out first: Release() may run a waiter that frees its own slot at
  // once (a cancelled client), and this slot must not be released twice.
  if (std::shared_ptr<DumpQueue> queue = std::move(queue_)) queue->Release();
}

std::shared_ptr<DumpQueue> DumpQueue::Create(int max_active, int max_waiting) {
  return std::shared_ptr<DumpQueue>(new DumpQueue(max_active, max_waiting));
}

Result<std::optional<DumpSlot>> DumpQueue::Acquire(Waiter& waiter) {
  std::lock_guard lock(mu_);
  if (active_ < max_active_ && waiting_.empty()) {
    ++active_;
    return std::optional<DumpSlot>(DumpSlot(shared_from_this()));
  }
  if (static_cast<int>(waiting_.size()) >= max_waiting_) {
    return Fail(ErrorCode::kResourceExhausted,
                "the agent is streaming " + std::to_string(max_active_) +
                    " heap profiles and " + std::to_string(max_waiting_) +
                    " more clients are already waiting for their turn; try again later");
  }
  waiting_.push_back(&waiter);
  return std::optional<DumpSlot>();
}

std::optional<DumpSlot> DumpQueue::TryAcquire() {
  std::lock_guard lock(mu_);
  if (active_ >= max_active_ || !waiting_.empty()) return std::nullopt;
  ++active_;
  return DumpSlot(shared_from_this());
}

bool DumpQueue::Withdraw(Waiter& waiter) {
  std::lock_guard lock(mu_);
  auto it = std::find(waiting_.begin(), waiting_.end(), &waiter);
  if (it == waiting_.end()) return false;
  waiting_.erase(it);
  return true;
}

int DumpQueue::active() const {
  std::lock_guard lock(mu_);
  return active_;
}

int DumpQueue::waiting() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(waiting_.size());
}

void DumpQueue::Release() {
  Waiter* next = nullptr;
  {
    std::lock_guard lock(mu_);
    if (waiting_.empty()) {
      --active_;
      return;
    }
    // The slot passes straight to the first waiter: active_ stays, and no
    // newcomer can take it in between.
    next = waiting_.front();
    waiting_.pop_front();
  }
  next->OnSlot(DumpSlot(shared_from_this()));
}

}  // namespace memprof::agent
