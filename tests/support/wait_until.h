#ifndef MEMPROF_TESTS_SUPPORT_WAIT_UNTIL_H_
#define MEMPROF_TESTS_SUPPORT_WAIT_UNTIL_H_

#include <chrono>
#include <thread>

namespace memprof::test_support {

// Polls `condition` until it returns true or `timeout` passes; returns the
// last result. This is how tests wait for anything asynchronous (a socket to
// appear or vanish, a timed window to end): a deadline, never a bare sleep.
template <typename Condition>
bool WaitUntil(Condition condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval = std::chrono::milliseconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_WAIT_UNTIL_H_
