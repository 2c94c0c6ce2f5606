#ifndef MEMPROF_AGENT_SERVICE_CALL_TRACKER_H_
#define MEMPROF_AGENT_SERVICE_CALL_TRACKER_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace memprof::agent {

// Counts RPCs in flight and remembers when the last one began or ended, so
// the agent can tell when nobody is using it. Lock-free; any thread.
class CallTracker {
 public:
  using Clock = std::chrono::steady_clock;

  void Begin() {
    in_flight_.fetch_add(1);
    Touch();
  }
  void End() {
    Touch();
    in_flight_.fetch_sub(1);
  }
  int in_flight() const { return in_flight_.load(); }
  Clock::time_point last_activity() const {
    return Clock::time_point(Clock::duration(last_activity_.load()));
  }
  void Touch() { last_activity_.store(Clock::now().time_since_epoch().count()); }

 private:
  std::atomic<int> in_flight_{0};
  std::atomic<int64_t> last_activity_{Clock::now().time_since_epoch().count()};
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_CALL_TRACKER_H_
