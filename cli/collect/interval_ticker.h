#ifndef MEMPROF_CLI_COLLECT_INTERVAL_TICKER_H_
#define MEMPROF_CLI_COLLECT_INTERVAL_TICKER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>

namespace memprof::cli {

// The clock a periodic command runs on. Production uses steady_clock and a
// sleep that a stop request (SIGINT/SIGTERM) ends at once; tests pass a
// fake that advances virtual time.
struct TickClock {
  using TimePoint = std::chrono::steady_clock::time_point;
  std::function<TimePoint()> now;
  // Sleeps until `deadline`; false if `stop` was requested first.
  std::function<bool(TimePoint deadline, const std::stop_token& stop)> sleep_until;
};

// steady_clock, and a sleep on a condition variable woken by the stop token.
TickClock SteadyTickClock();

// A fixed-rate schedule: tick k is due at start + k * interval, so the
// period does not drift by the time each piece of work takes. Work that
// overruns one or more periods skips the ticks it missed (it never catches
// up with a burst); `skipped()` counts them. Not thread-safe.
class IntervalTicker {
 public:
  IntervalTicker(std::chrono::milliseconds interval, TickClock clock);

  // Waits for the next due tick. The first call returns at once (tick 0).
  // Returns false, without waiting further, once `stop` is requested.
  [[nodiscard]] bool WaitNext(const std::stop_token& stop);

  uint64_t skipped() const { return skipped_; }

 private:
  TickClock::TimePoint DueTime(uint64_t tick) const;

  std::chrono::milliseconds interval_;
  TickClock clock_;
  TickClock::TimePoint start_{};
  uint64_t next_ = 0;  // index of the next tick to wait for
  uint64_t skipped_ = 0;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_INTERVAL_TICKER_H_
