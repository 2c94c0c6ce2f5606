#include "cli/exporter/heap_request_gate.h"

#include <algorithm>

namespace memprof::cli {

HeapRequestGate::Ticket::~Ticket() {
  if (gate_ != nullptr) gate_->Leave(pid_);
}

std::expected<HeapRequestGate::Ticket, HeapRequestGate::Busy> HeapRequestGate::TryEnter(
    pid_t pid, std::chrono::seconds expected) {
  std::lock_guard lock(mu_);
  if (auto it = running_.find(pid); it != running_.end()) {
    const char* article = profile_.find_first_of("aeiou") == 0 ? "an " : "a ";
    return std::unexpected(Busy{article + profile_ + " of pid " + std::to_string(pid) +
                                    " is already being taken (one at a time per process); "
                                    "try again when it is done",
                                RetryAfter(it->second)});
  }
  if (running_.size() >= max_in_flight_) {
    Clock::time_point soonest = Clock::time_point::max();
    for (const auto& [other, end] : running_) soonest = std::min(soonest, end);
    return std::unexpected(Busy{"the exporter is already taking " +
                                    std::to_string(running_.size()) + " " + profile_ +
                                    "s (its limit); try again shortly",
                                RetryAfter(soonest)});
  }
  running_.emplace(pid, Clock::now() + expected);
  return Ticket(this, pid);
}

void HeapRequestGate::Leave(pid_t pid) {
  std::lock_guard lock(mu_);
  running_.erase(pid);
}

std::chrono::seconds HeapRequestGate::RetryAfter(Clock::time_point expected_end) const {
  const auto left = std::chrono::ceil<std::chrono::seconds>(expected_end - Clock::now());
  return std::max(left, std::chrono::seconds(1));
}

}  // namespace memprof::cli
