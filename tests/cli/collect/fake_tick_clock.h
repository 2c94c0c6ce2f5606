#ifndef MEMPROF_TESTS_CLI_COLLECT_FAKE_TICK_CLOCK_H_
#define MEMPROF_TESTS_CLI_COLLECT_FAKE_TICK_CLOCK_H_

#include <chrono>
#include <functional>
#include <vector>

#include "cli/collect/interval_ticker.h"

namespace memprof::cli::testing {

// Virtual time for periodic commands: sleeping moves the clock to the
// deadline at once and records it; `on_sleep` may interfere (e.g. request a
// stop, as a signal would).
class FakeTickClock {
 public:
  TickClock::TimePoint now = TickClock::TimePoint(std::chrono::hours(1000));
  std::vector<TickClock::TimePoint> sleeps;
  std::function<void()> on_sleep;

  TickClock Clock() {
    TickClock clock;
    clock.now = [this] { return now; };
    clock.sleep_until = [this](TickClock::TimePoint deadline, const std::stop_token& stop) {
      sleeps.push_back(deadline);
      if (on_sleep) on_sleep();
      if (stop.stop_requested()) return false;
      if (deadline > now) now = deadline;
      return true;
    };
    return clock;
  }
};

}  // namespace memprof::cli::testing

#endif  // MEMPROF_TESTS_CLI_COLLECT_FAKE_TICK_CLOCK_H_
