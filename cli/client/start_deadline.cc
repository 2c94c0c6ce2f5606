#include "cli/client/start_deadline.h"

#include <utility>

namespace memprof::cli {

StartDeadline::StartDeadline(std::chrono::milliseconds timeout, std::function<void()> on_expiry)
    : on_expiry_(std::move(on_expiry)), thread_([this, timeout] { Wait(timeout); }) {}

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

bool StartDeadline::expired() const {
  std::lock_guard lock(mu_);
  return expired_;
}

void StartDeadline::Wait(std::chrono::milliseconds timeout) {
  {
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, timeout, [this] { return disarmed_; })) return;
    expired_ = true;
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
