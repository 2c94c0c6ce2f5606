#ifndef MEMPROF_CLI_CLIENT_START_DEADLINE_H_
#define MEMPROF_CLI_CLIENT_START_DEADLINE_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

namespace memprof::cli {

// A deadline for something to begin (or to go on) rather than to end: runs
// `on_expiry` (once, on its own thread) unless Disarm() comes within
// `timeout` of construction, or of the last Postpone(). Dump uses it to bound
// the wait for the agent's first chunk (its turn in the agent's queue, and
// taking the profile) by --timeout, and then each wait for the next chunk,
// without bounding how long the whole transfer takes. Destroying it disarms
// it and waits for its thread.
class StartDeadline {
 public:
  StartDeadline(std::chrono::milliseconds timeout, std::function<void()> on_expiry);
  ~StartDeadline();
  StartDeadline(const StartDeadline&) = delete;
  StartDeadline& operator=(const StartDeadline&) = delete;

  // True: disarmed in time, `on_expiry` never runs. False: it expired first.
  bool Disarm();
  // Progress: the deadline is now `timeout` from now. False when it had
  // expired already (then `on_expiry` has run or is running); a disarmed
  // deadline stays disarmed.
  bool Postpone(std::chrono::milliseconds timeout);
  bool expired() const;

 private:
  void Wait();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::chrono::steady_clock::time_point deadline_;  // guarded by mu_
  bool disarmed_ = false;                           // guarded by mu_
  bool expired_ = false;                            // guarded by mu_
  std::function<void()> on_expiry_;
  std::thread thread_;  // last: starts once everything above exists
};

// Waits `delay` unless `stop` is requested first; false when it was (also
// before the wait).
bool SleepUnlessStopped(std::chrono::milliseconds delay, const std::stop_token& stop);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_START_DEADLINE_H_
