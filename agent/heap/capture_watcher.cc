#include "agent/heap/capture_watcher.h"

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <utility>

#include "agent/allocators/jemalloc_allocator.h"
#include "agent/allocators/jemalloc_heap_profiler.h"
#include "agent/logging/agent_logger.h"
#include "agent/shared/agent_thread.h"
#include "common/duration.h"

namespace memprof::agent {
Result<void> CheckCaptureSettings(const CaptureSettings& s) {
  if (s.growth_bytes < kMinCaptureGrowthBytes || s.growth_bytes > kMaxCaptureGrowthBytes) {
    return Fail(ErrorCode::kInvalidArgument,
                "capture growth " + std::to_string(s.growth_bytes) +
                    " bytes is outside 1 MiB..1 TiB (" + std::to_string(kMinCaptureGrowthBytes) +
                    ".." + std::to_string(kMaxCaptureGrowthBytes) + " bytes)");
  }
  if (s.keep < kMinCaptureKeep || s.keep > kMaxCaptureKeep) {
    return Fail(ErrorCode::kInvalidArgument, "captures to keep " + std::to_string(s.keep) +
                                                 " is outside " + std::to_string(kMinCaptureKeep) +
                                                 ".." + std::to_string(kMaxCaptureKeep));
  }
  return {};
}

CaptureWatcher::CaptureWatcher(const Allocator& allocator, std::chrono::milliseconds poll)
    : allocator_(allocator), poll_(poll) {}

CaptureWatcher::~CaptureWatcher() { Disarm(); }

Result<CaptureState> CaptureWatcher::Arm(const CaptureSettings& settings) {
  if (auto ok = CheckCaptureSettings(settings); !ok) return Fail(ok.error());
  auto jemalloc = RequireHeapProfiling(allocator_);
  if (!jemalloc) return Fail(jemalloc.error());
  auto allocated = (*jemalloc)->ReadAllocated();
  if (!allocated) {
    return Fail(ErrorCode::kFailedPrecondition,
                "cannot arm peak capture: jemalloc's statistics (stats.allocated) are not "
                "available: " + allocated.error().message);
  }
  std::lock_guard life(lifecycle_mu_);
  keeper_.SetKeep(settings.keep);
  {
    std::lock_guard lock(mu_);
    armed_ = true;
    settings_ = settings;
    high_water_ = *allocated;
    ++arm_generation_;
    if (!running_) StartThreadLocked();
  }
  cv_.notify_all();
  Logger().info("peak capture armed: a heap profile each time allocated bytes pass {} by {}",
                *allocated, settings.growth_bytes);
  return State();
}

// With mu_ and lifecycle_mu_ held. The thread inherits the signal mask in
// force here: all signals blocked, so no host handler ever runs on it.
void CaptureWatcher::StartThreadLocked() {
  if (thread_.joinable()) thread_.join();  // left its loop (running_ is false)
  running_ = true;
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] { Loop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void CaptureWatcher::Disarm() {
  std::lock_guard life(lifecycle_mu_);
  bool was_armed = false;
  {
    std::lock_guard lock(mu_);
    was_armed = std::exchange(armed_, false);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (was_armed) Logger().info("peak capture disarmed; captures taken are kept");
}

CaptureState CaptureWatcher::State() {
  CaptureState state;
  {
    std::lock_guard lock(mu_);
    state.armed = armed_;
    state.growth_bytes = armed_ ? settings_.growth_bytes : 0;
    state.high_water_bytes = armed_ ? high_water_ : 0;
  }
  state.keep = keeper_.keep();
  state.taken_total = keeper_.TakenTotal();
  state.held = keeper_.Held();
  return state;
}

Result<CaptureWatcher::Opened> CaptureWatcher::Open(uint64_t sequence) {
  auto opened = keeper_.Open(sequence);
  if (!opened) return Fail(opened.error());
  const CaptureInfo& info = opened->info;
  auto dump = std::make_unique<HeapDump>(std::move(opened->fd), info.size_bytes, info.sequence,
                                         info.created_unix_ms);
  return Opened{std::move(dump), info};
}

void CaptureWatcher::Loop() {
  BecomeAgentThread("capture");
  std::unique_lock lock(mu_);
  while (armed_) {
    cv_.wait_for(lock, poll_);
    if (!armed_) break;
    const JemallocControl* jemalloc = allocator_.Jemalloc();
    if (jemalloc == nullptr) break;
    PollOnce(lock, *jemalloc);
  }
  running_ = false;
}

// One look at the allocator, with `lock` (on mu_) released while jemalloc
// is asked and while a capture is written.
void CaptureWatcher::PollOnce(std::unique_lock<std::mutex>& lock,
                              const JemallocControl& jemalloc) {
  const uint64_t generation = arm_generation_;
  const uint64_t high_water = high_water_;
  const uint64_t growth = settings_.growth_bytes;
  lock.unlock();
  const bool active = jemalloc.ProfilingActive();
  auto allocated = active ? jemalloc.ReadAllocated() : Result<uint64_t>(0);
  const bool due = active && allocated && CaptureDue(*allocated, high_water, growth);
  if (due) Capture(jemalloc, *allocated);
  lock.lock();
  if (generation != arm_generation_) return;  // re-armed meanwhile: its mark stands
  if (!active) {
    armed_ = false;
    Logger().info("peak capture disarmed: profiling is no longer active");
  } else if (due) {
    high_water_ = std::max(high_water_, *allocated);
  }
}

void CaptureWatcher::Capture(const JemallocControl& jemalloc, uint64_t allocated) {
  const auto start = std::chrono::steady_clock::now();
  CaptureInfo info{.created_unix_ms = NowUnixMs(),
                   .allocated_bytes = allocated,
                   .sample_interval_bytes = jemalloc.SampleInterval()};
  auto file = CreateDumpFile();
  OwnedFd owned(file ? std::move(*file) : Fd());
  if (!owned.valid()) {
    Logger().warn("peak capture skipped: {}",
                  file ? "cannot keep the capture's descriptor" : file.error().message);
    return;
  }
  const int number = keeper_.BeginCapture(std::move(owned));
  auto size = WriteProfileInto(jemalloc, number);
  if (!size) {
    keeper_.Abandon(number);
    Logger().warn("peak capture failed: {}", size.error().message);
    return;
  }
  info.size_bytes = *size;
  info = keeper_.Add(number, info);
  Logger().info("peak capture #{}: allocated {} bytes; {}-byte profile in {} ms", info.sequence,
                allocated, info.size_bytes,
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count());
}

}  // namespace memprof::agent
