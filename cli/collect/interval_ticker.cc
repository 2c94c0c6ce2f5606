#include "cli/collect/interval_ticker.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <utility>

namespace memprof::cli {

TickClock SteadyTickClock() {
  TickClock clock;
  clock.now = [] { return std::chrono::steady_clock::now(); };
  clock.sleep_until = [](TickClock::TimePoint deadline, const std::stop_token& stop) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    // Returns early (true) only when the stop is requested: the predicate
    // never becomes true otherwise.
    cv.wait_until(lock, stop, deadline, [] { return false; });
    return !stop.stop_requested();
  };
  return clock;
}

IntervalTicker::IntervalTicker(std::chrono::milliseconds interval, TickClock clock)
    : interval_(std::max(interval, std::chrono::milliseconds(1))), clock_(std::move(clock)) {}

TickClock::TimePoint IntervalTicker::DueTime(uint64_t tick) const {
  return start_ + static_cast<int64_t>(tick) * interval_;
}

bool IntervalTicker::WaitNext(const std::stop_token& stop) {
  if (stop.stop_requested()) return false;
  const TickClock::TimePoint now = clock_.now();
  if (next_ == 0) {
    start_ = now;
    next_ = 1;
    return true;
  }
  TickClock::TimePoint due = DueTime(next_);
  if (now >= due + interval_) {  // overran whole periods: skip to the latest due tick
    const uint64_t behind = static_cast<uint64_t>((now - due) / interval_);
    skipped_ += behind;
    next_ += behind;
    due = DueTime(next_);
  }
  ++next_;
  if (now >= due) return true;
  return clock_.sleep_until(due, stop);
}

}  // namespace memprof::cli
