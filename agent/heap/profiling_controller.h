#ifndef MEMPROF_AGENT_HEAP_PROFILING_CONTROLLER_H_
#define MEMPROF_AGENT_HEAP_PROFILING_CONTROLLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "agent/allocators/allocator.h"
#include "common/result.h"

namespace memprof::agent {

// Activation as seen at one moment.
struct ProfilingState {
  bool active = false;
  int64_t window_end_unix_ms = 0;  // 0: no timed window
};

// What an activation asks for besides prof.active=true.
struct ActivationRequest {
  std::optional<std::chrono::milliseconds> window;  // nullopt: until deactivated
  // A new sample interval (a power of two, 1 B..1 GiB); 0 keeps the current one.
  uint64_t sample_interval_bytes = 0;
  // Discard the samples collected so far even if the interval does not change.
  bool reset = false;
  // Compare-and-set: non-zero activates only if this is still the
  // activation generation (see ProfilingController::Generation()).
  uint64_t if_generation = 0;
};

struct ActivationChange {
  ProfilingState previous;
  ProfilingState current;
  bool window_replaced = false;  // a timed window in progress was replaced or cancelled
  uint64_t previous_sample_interval_bytes = 0;
  uint64_t sample_interval_bytes = 0;  // in force after the change
  bool samples_reset = false;          // prof.reset ran: earlier samples are gone
  uint64_t generation = 0;             // the activation generation after the change
};

// Owns the activation (jemalloc: prof.active; see HeapProfiler) and the
// timed profiling window. A window is closed by the
// agent itself when it ends, so it ends even if the CLI that opened it died.
//
// Every change of the activation (each Activate and Deactivate served, and a
// window ending by itself) bumps the activation generation, so that a client
// can tell whether anyone changed it since it last looked, and make a change
// conditional on that (`if_generation`: compare-and-set under the lock).
//
// Threading: one timer thread ("memprof-window") while a window is open,
// started by the timed activation and ended with the window (however it
// ends): an idle agent has no such thread and never wakes up. All public
// methods are thread-safe.
class ProfilingController {
 public:
  explicit ProfilingController(const Allocator& allocator) : allocator_(allocator) {}
  ~ProfilingController();
  ProfilingController(const ProfilingController&) = delete;
  ProfilingController& operator=(const ProfilingController&) = delete;

  // Sets prof.active=true. With a window, deactivates when it ends; a new
  // window replaces the old one, and activating without a window cancels a
  // window in progress (profiling then runs until deactivated). Idempotent.
  [[nodiscard]] Result<ActivationChange> Activate(std::optional<std::chrono::milliseconds> window);
  // As above, and first resets the samples (prof.reset) when `request.reset`
  // is set or the sample interval changes: that DISCARDS every sample
  // collected so far, and is the only thing here that does. A sample interval
  // already in force resets nothing. An interval that is not a power of two
  // within 1 B..1 GiB, or a window outside 1s..24h, is kInvalidArgument and
  // changes nothing. A non-zero `request.if_generation` that is not the
  // current generation is kFailedPrecondition and changes nothing either.
  [[nodiscard]] Result<ActivationChange> Activate(const ActivationRequest& request);
  // Sets prof.active=false and cancels any window. Samples are kept. A
  // non-zero `if_generation` that is not the current generation is
  // kFailedPrecondition and changes nothing.
  [[nodiscard]] Result<ActivationChange> Deactivate(uint64_t if_generation = 0);
  // Takes no lock: the agent's fork handler reads it on a host thread that
  // may already hold memprof's sampler's locks (the sampler's own prepare
  // handler, registered later, runs first), while a thread in Activate or
  // Deactivate holds mu_ and waits for one of those locks.
  int64_t WindowEndUnixMs() const;
  // In a forked child, the window its parent had open at fork() time (wall
  // clock, as WindowEndUnixMs()): the child keeps sampling until then and no
  // longer, as the parent does. An end already past deactivates now. The
  // parent's samples are the child's too (jemalloc copies them with the
  // heap); nothing is reset.
  void InheritWindow(int64_t end_unix_ms);
  // The activation generation: 1 until the first change, never 0 (which in
  // the protocol means "an agent that does not count").
  uint64_t Generation() const;

 private:
  ProfilingState StateLocked(const HeapProfiler& profiler) const;
  Result<void> CheckGenerationLocked(uint64_t if_generation) const;
  void ArmLocked(std::chrono::milliseconds window);
  // Ends the window now: prof.active=false, a new generation.
  void EndWindowLocked();
  void DisarmLocked();
  void TimerLoop();

  const Allocator& allocator_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  // Written under mu_, read without it (WindowEndUnixMs).
  std::atomic<int64_t> window_end_unix_ms_{0};
  uint64_t generation_ = 1;
  bool stopping_ = false;
  bool timer_running_ = false;  // the timer thread has not left its loop
  std::thread timer_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_PROFILING_CONTROLLER_H_
