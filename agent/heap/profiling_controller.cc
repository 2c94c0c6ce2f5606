#include "agent/heap/profiling_controller.h"

#include <string>

#include "agent/logging/agent_logger.h"
#include "agent/shared/agent_thread.h"
#include "common/duration.h"
#include "common/sample_interval.h"

namespace memprof::agent {
namespace {

Result<void> CheckWindow(std::optional<std::chrono::milliseconds> window) {
  if (window && (*window < kMinWindow || *window > kMaxWindow)) {
    return Fail(ErrorCode::kInvalidArgument,
                "profiling window " + FormatDuration(*window) + " is outside " +
                    FormatDuration(kMinWindow) + ".." + FormatDuration(kMaxWindow));
  }
  return {};
}

void LogActivation(const ActivationRequest& request, const ActivationChange& change) {
  Logger().info("profiling activated{}",
                request.window ? " for " + FormatDuration(*request.window) : "");
  if (change.samples_reset) {
    Logger().info("samples reset (prof.reset); sample interval {} bytes (was {})",
                  change.sample_interval_bytes, change.previous_sample_interval_bytes);
  }
}

}  // namespace

ProfilingController::~ProfilingController() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (timer_.joinable()) timer_.join();
}

Result<ActivationChange> ProfilingController::Activate(
    std::optional<std::chrono::milliseconds> window) {
  return Activate(ActivationRequest{window});
}

Result<ActivationChange> ProfilingController::Activate(const ActivationRequest& request) {
  auto profiler = allocator_.ReadyProfiler();
  if (!profiler) return Fail(profiler.error());
  if (auto ok = CheckWindow(request.window); !ok) return Fail(ok.error());
  std::optional<unsigned> lg_sample;
  if (request.sample_interval_bytes != 0) {
    auto lg = SampleIntervalLg(request.sample_interval_bytes);
    if (!lg) return Fail(lg.error());
    lg_sample = *lg;
  }
  std::lock_guard lock(mu_);
  if (auto ok = CheckGenerationLocked(request.if_generation); !ok) return Fail(ok.error());
  ActivationChange change;
  change.previous = StateLocked(**profiler);
  change.previous_sample_interval_bytes = (*profiler)->SampleInterval();
  const bool new_interval = request.sample_interval_bytes != 0 &&
                            request.sample_interval_bytes != change.previous_sample_interval_bytes;
  if (new_interval || request.reset) {
    // Before prof.active: the samples of this activation are all kept.
    if (auto r = (*profiler)->Reset(lg_sample); !r) return Fail(r.error());
    change.samples_reset = true;
  }
  if (auto r = (*profiler)->SetActive(true); !r) {
    if (change.samples_reset) ++generation_;  // the reset did happen
    return Fail(r.error());
  }
  change.window_replaced = deadline_.has_value();
  if (request.window) {
    ArmLocked(*request.window);
  } else {
    DisarmLocked();
  }
  change.generation = ++generation_;
  change.current = StateLocked(**profiler);
  change.sample_interval_bytes = (*profiler)->SampleInterval();
  LogActivation(request, change);
  return change;
}

Result<ActivationChange> ProfilingController::Deactivate(uint64_t if_generation) {
  auto profiler = allocator_.ReadyProfiler();
  if (!profiler) return Fail(profiler.error());
  std::lock_guard lock(mu_);
  if (auto ok = CheckGenerationLocked(if_generation); !ok) return Fail(ok.error());
  ActivationChange change;
  change.previous = StateLocked(**profiler);
  if (auto r = (*profiler)->SetActive(false); !r) return Fail(r.error());
  change.window_replaced = deadline_.has_value();
  DisarmLocked();
  change.generation = ++generation_;
  change.current = StateLocked(**profiler);
  Logger().info("profiling deactivated");
  return change;
}

int64_t ProfilingController::WindowEndUnixMs() const {
  return window_end_unix_ms_.load(std::memory_order_acquire);
}

uint64_t ProfilingController::Generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

Result<void> ProfilingController::CheckGenerationLocked(uint64_t if_generation) const {
  if (if_generation == 0 || if_generation == generation_) return {};
  return Fail(ErrorCode::kFailedPrecondition,
              "the profiling activation was changed by someone else (activation generation " +
                  std::to_string(if_generation) + " expected, now " + std::to_string(generation_) +
                  "); nothing was changed");
}

ProfilingState ProfilingController::StateLocked(const HeapProfiler& profiler) const {
  return ProfilingState{profiler.Active(), window_end_unix_ms_.load(std::memory_order_relaxed)};
}

void ProfilingController::ArmLocked(std::chrono::milliseconds window) {
  deadline_ = std::chrono::steady_clock::now() + window;
  window_end_unix_ms_.store(NowUnixMs() + window.count(), std::memory_order_release);
  if (!timer_running_) {
    // The thread of an earlier window has left its loop (it needs no lock
    // to end from there).
    if (timer_.joinable()) timer_.join();
    timer_running_ = true;
    timer_ = std::thread([this] { TimerLoop(); });
  }
  cv_.notify_all();
}

void ProfilingController::InheritWindow(int64_t end_unix_ms) {
  auto profiler = allocator_.ReadyProfiler();
  if (!profiler || !(*profiler)->Active()) return;
  std::lock_guard lock(mu_);
  const int64_t left_ms = end_unix_ms - NowUnixMs();
  if (left_ms <= 0) {
    EndWindowLocked();
    return;
  }
  ArmLocked(std::chrono::milliseconds(left_ms));
  window_end_unix_ms_.store(end_unix_ms, std::memory_order_release);
  Logger().info("profiling window inherited from the parent: ends in {}",
                FormatDuration(std::chrono::milliseconds(left_ms)));
}

void ProfilingController::DisarmLocked() {
  deadline_.reset();
  window_end_unix_ms_.store(0, std::memory_order_release);
  cv_.notify_all();
}

void ProfilingController::EndWindowLocked() {
  DisarmLocked();
  ++generation_;
  if (auto profiler = allocator_.ReadyProfiler()) {
    if (auto r = (*profiler)->SetActive(false); !r) {
      Logger().warn("could not end the profiling window: {}", r.error().message);
    } else {
      Logger().info("profiling window ended; profiling deactivated");
    }
  }
}

void ProfilingController::TimerLoop() {
  // Named apart from gRPC's threads: the agent waits for those to end before
  // fork(), and this one lives on.
  BecomeAgentThread("window");
  std::unique_lock lock(mu_);
  // Runs while a window is open; a window cancelled, replaced by none or
  // ended ends the thread (ArmLocked starts the next one).
  while (!stopping_ && deadline_) {
    const auto deadline = *deadline_;
    cv_.wait_until(lock, deadline);
    if (stopping_ || !deadline_ || *deadline_ != deadline) continue;
    if (std::chrono::steady_clock::now() < deadline) continue;
    EndWindowLocked();
  }
  timer_running_ = false;
}

}  // namespace memprof::agent
