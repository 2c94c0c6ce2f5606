#ifndef MEMPROF_CLI_CLIENT_START_DEADLINE_H_
#define MEMPROF_CLI_CLIENT_START_DEADLINE_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

namespace memprof::cli {

// A deadline for something to begin rather than to end: runs `on_expiry`
// (once, on its own thread) unless Disarm() comes within `timeout` of
// construction. Dump uses it to bound the wait for the agent's first chunk
// (its turn in the agent's queue, and taking the profile) by --timeout
// without bounding the transfer that follows. Destroying it disarms it and
// waits for its thread.
class StartDeadline {
 public:
  StartDeadline(std::chrono::milliseconds timeout, std::function<void()> on_expiry);
  ~StartDeadline();
  StartDeadline(const StartDeadline&) = delete;
  StartDeadline& operator=(const StartDeadline&) = delete;

  // True: disarmed in time, `on_expiry` never runs. False: it expired first.
  bool Disarm();
  bool expired() const;

 private:
  void Wait(std::chrono::milliseconds timeout);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;  // guarded by mu_
  bool expired_ = false;   // guarded by mu_
  std::function<void()> on_expiry_;
  std::thread thread_;  // last: starts once everything above exists
};

// Waits `delay` unless `stop` is requested first; false when it was (also
// before the wait).
bool SleepUnlessStopped(std::chrono::milliseconds delay, const std::stop_token& stop);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_START_DEADLINE_H_
