#include "cli/collect/window_wait.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A child process that does nothing until killed; killed and reaped on
// destruction. fork() without exec is fine here: the child only calls pause().
class IdleChild {
 public:
  IdleChild() : pid_(::fork()) {
    if (pid_ == 0) {
      while (true) ::pause();
    }
  }
  ~IdleChild() {
    Kill();
    Reap();
  }
  pid_t pid() const { return pid_; }
  void Kill() const {
    if (pid_ > 0) ::kill(pid_, SIGKILL);  // never kill(-1): fork may have failed
  }
  void Reap() {
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_;
};

TEST(WindowWaitTest, WaitsTheWholeDurationAndTicks) {
  IdleChild child;
  ASSERT_GT(child.pid(), 0);
  int ticks = 0;
  milliseconds last_tick{0};
  const auto result = WaitForWindow(child.pid(), milliseconds(300), std::stop_token(),
                                    milliseconds(50), [&](milliseconds waited) {
                                      ++ticks;
                                      last_tick = waited;
                                    });
  EXPECT_EQ(result.end, WindowEnd::kElapsed);
  EXPECT_GE(result.waited, milliseconds(300));
  EXPECT_LT(result.waited, seconds(5));
  EXPECT_GE(ticks, 3);
  EXPECT_LE(last_tick, result.waited);
}

TEST(WindowWaitTest, EndEarlyRequestEndsItAtOnce) {
  IdleChild child;
  ASSERT_GT(child.pid(), 0);
  std::stop_source stop;
  std::thread interrupter([&stop] {
    std::this_thread::sleep_for(milliseconds(100));
    stop.request_stop();
  });
  const auto result = WaitForWindow(child.pid(), seconds(60), stop.get_token(), seconds(1), {});
  // It returned because of the request, not before it: no lower bound in
  // milliseconds, which a loaded machine stretches from either side.
  const bool requested_by_then = stop.stop_requested();
  interrupter.join();
  EXPECT_EQ(result.end, WindowEnd::kEndedEarly);
  EXPECT_TRUE(requested_by_then);
  EXPECT_LT(result.waited, seconds(10));
}

TEST(WindowWaitTest, AlreadyRequestedEndsBeforeWaiting) {
  IdleChild child;
  ASSERT_GT(child.pid(), 0);
  std::stop_source stop;
  stop.request_stop();
  const auto result = WaitForWindow(child.pid(), seconds(60), stop.get_token(), seconds(1), {});
  EXPECT_EQ(result.end, WindowEnd::kEndedEarly);
  EXPECT_LT(result.waited, seconds(1));
}

// Killed but not reaped (a zombie, as a target whose parent is busy would
// be): the exit is seen all the same.
TEST(WindowWaitTest, TargetExitEndsItAtOnceEvenBeforeItIsReaped) {
  IdleChild child;
  ASSERT_GT(child.pid(), 0);
  std::thread killer([&child] {
    std::this_thread::sleep_for(milliseconds(100));
    child.Kill();
  });
  const auto result = WaitForWindow(child.pid(), seconds(60), std::stop_token(), seconds(1), {});
  killer.join();
  EXPECT_EQ(result.end, WindowEnd::kTargetExited);
  EXPECT_LT(result.waited, seconds(10));
}

TEST(WindowWaitTest, AProcessAlreadyGoneEndsItAtOnce) {
  IdleChild child;
  ASSERT_GT(child.pid(), 0);
  const pid_t pid = child.pid();
  child.Kill();
  child.Reap();  // gone for good (its pid is free again, and unlikely to be reused this soon)
  const auto result = WaitForWindow(pid, seconds(60), std::stop_token(), seconds(1), {});
  EXPECT_EQ(result.end, WindowEnd::kTargetExited);
  EXPECT_EQ(result.waited, milliseconds(0));
}

}  // namespace
}  // namespace memprof::cli
