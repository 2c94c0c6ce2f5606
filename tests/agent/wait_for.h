#ifndef MEMPROF_TESTS_AGENT_WAIT_FOR_H_
#define MEMPROF_TESTS_AGENT_WAIT_FOR_H_

#include <chrono>
#include <functional>
#include <thread>

namespace memprof::agent {

// Polls `condition` every few milliseconds until it holds or `deadline` passes.
inline bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

}  // namespace memprof::agent

#endif  // MEMPROF_TESTS_AGENT_WAIT_FOR_H_
