#include "cli/collect/window_wait.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "cli/io/stop_wake.h"
#include "common/fd.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// glibc 2.36's <sys/pidfd.h> lacks extern "C" (its pidfd_open does not link
// from C++), and older ones lack the wrapper: make the system call directly.
int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

// How long the next poll() may sleep: to the deadline, or to the next tick.
int PollTimeout(Clock::time_point deadline, milliseconds tick, bool ticking) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  if (ticking) left = std::min(left, tick);
  // Round up so a wait never ends a millisecond short and spins.
  return static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, INT32_MAX));
}

}  // namespace

WindowWaitResult WaitForWindow(pid_t pid, milliseconds duration, const std::stop_token& end_early,
                               milliseconds tick, const WindowTick& on_tick) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + duration;
  Fd process(PidfdOpen(pid));
  if (!process && errno == ESRCH) return {WindowEnd::kTargetExited, milliseconds(0)};
  const StopWake wake(end_early);
  const bool can_wake = wake.fd() >= 0;
  const bool ticking = static_cast<bool>(on_tick) || !can_wake;
  if (!can_wake) tick = std::min(tick, StopWake::kPollWithoutWake);
  pollfd fds[2] = {{wake.fd(), POLLIN, 0}, {process.get(), POLLIN, 0}};
  const nfds_t count = process ? 2 : 1;
  while (true) {
    if (end_early.stop_requested()) return {WindowEnd::kEndedEarly, Since(start)};
    if (Clock::now() >= deadline) return {WindowEnd::kElapsed, Since(start)};
    const int ready = ::poll(fds, count, PollTimeout(deadline, tick, ticking));
    if (ready < 0 && errno != EINTR) ::usleep(10'000);  // not expected; never spin
    if (count == 2 && ready > 0 && fds[1].revents != 0) {
      return {WindowEnd::kTargetExited, Since(start)};
    }
    if (ready == 0 && on_tick) on_tick(Since(start));
  }
}

}  // namespace memprof::cli
