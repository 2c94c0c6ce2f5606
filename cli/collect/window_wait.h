#ifndef MEMPROF_CLI_COLLECT_WINDOW_WAIT_H_
#define MEMPROF_CLI_COLLECT_WINDOW_WAIT_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <stop_token>

namespace memprof::cli {

// Why a profiling window ended on the CLI's side.
enum class WindowEnd {
  kElapsed,       // the whole duration passed
  kEndedEarly,    // `end_early` was requested (SIGINT/SIGTERM)
  kTargetExited,  // the target process exited
};

struct WindowWaitResult {
  WindowEnd end = WindowEnd::kElapsed;
  std::chrono::milliseconds waited{0};
};

// Called about every `tick` while waiting, with the time waited so far.
using WindowTick = std::function<void(std::chrono::milliseconds waited)>;

// Waits `duration`, or less: until `end_early` is requested or process `pid`
// exits. The process is watched through a pidfd, which becomes readable as
// soon as it exits (before anyone reaps it, and immune to pid reuse); a
// process already gone when the wait starts ends it at once. On a kernel
// without pidfd_open (before 5.3) the process is not watched. Without
// `on_tick` the thread sleeps in one poll() for the whole window.
WindowWaitResult WaitForWindow(pid_t pid, std::chrono::milliseconds duration,
                               const std::stop_token& end_early, std::chrono::milliseconds tick,
                               const WindowTick& on_tick);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_WINDOW_WAIT_H_
