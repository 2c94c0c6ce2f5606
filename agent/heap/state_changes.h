#ifndef MEMPROF_AGENT_HEAP_STATE_CHANGES_H_
#define MEMPROF_AGENT_HEAP_STATE_CHANGES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace memprof::agent {

// Tells those who follow the agent (the Watch RPC) that what Status shows of
// captures and allocation windows changed: a capture taken or dropped,
// capturing armed or disarmed, a window opened or ended, its profile held or
// handed over. The parts that change call Changed(); a follower reads the
// new state itself, so a listener learns only that something changed, and
// several changes may reach it as one.
//
// Changed() calls every listener on the caller's thread, under this
// object's lock: a listener must only note the change and schedule its
// work, never call Changed() or Unsubscribe(), and the callers of Changed()
// hold none of their own locks (a listener may read their state at once).
// Unsubscribe() returns only once no call to that listener is running.
//
// Thread-safe.
class StateChanges {
 public:
  using Listener = std::function<void()>;

  // Returns the listener's id for Unsubscribe.
  uint64_t Subscribe(Listener listener);
  void Unsubscribe(uint64_t id);
  void Changed();

 private:
  std::mutex mu_;
  uint64_t last_id_ = 0;                    // guarded by mu_
  std::map<uint64_t, Listener> listeners_;  // guarded by mu_
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_STATE_CHANGES_H_
