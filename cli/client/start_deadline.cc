#include "cli/client/start_deadline.h"

#include <utility>

namespace memprof::cli {

StartDeadline::StartDeadline(std::chrono::milliseconds timeout, std::function<void()> on_expiry)
    : deadline_(std::chrono::steady_clock::now() + timeout),
      on_expiry_(std::move(on_expiry)),
      thread_([this] { Wait(); }) {}

StartDeadline::~StartDeadline() {
  Disarm();
  thread_.join();
}

bool StartDeadline::Disarm() {
  {
    std::lock_guard lock(mu_);
    if (expired_) return false;
    disarmed_ = true;
  }
  cv_.notify_all();
  return true;
}

bool StartDeadline::Postpone(std::chrono::milliseconds timeout) {
  {
    std::lock_guard lock(mu_);
    if (expired_) return false;
    deadline_ = std::chrono::steady_clock::now() + timeout;
  }
  cv_.notify_all();
  return true;
}

bool StartDeadline::expired() const {
  std::lock_guard lock(mu_);
  return expired_;
}

void StartDeadline::Wait() {
  {
    std::unique_lock lock(mu_);
    while (!disarmed_) {
      const auto until = deadline_;
      // Woken early by Disarm(), or by Postpone() moving the deadline.
      if (cv_.wait_until(lock, until, [&] { return disarmed_ || deadline_ != until; })) continue;
      expired_ = true;
      break;
    }
    if (!expired_) return;
  }
  on_expiry_();
}

bool SleepUnlessStopped(std::chrono::milliseconds delay, const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, delay, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace memprof::cli
