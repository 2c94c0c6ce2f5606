#include "agent/heap/capture_watcher.h"

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <utility>

#include "agent/allocators/jemalloc_allocator.h"
#include "agent/allocators/sampler_heap_profiler.h"
#include "agent/logging/agent_logger.h"
#include "agent/shared/agent_thread.h"
#include "common/duration.h"

namespace memprof::agent {
Result<void> CheckCaptureSettings(const CaptureSettings& s) {
  if (s.growth_bytes == 0 && s.near_limit_percent == 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "peak capture needs a trigger: a growth (1 MiB..1 TiB) or a share of the "
                "memory limit (1..99%)");
  }
  if (s.growth_bytes != 0 &&
      (s.growth_bytes < kMinCaptureGrowthBytes || s.growth_bytes > kMaxCaptureGrowthBytes)) {
    return Fail(ErrorCode::kInvalidArgument,
                "capture growth " + std::to_string(s.growth_bytes) +
                    " bytes is outside 1 MiB..1 TiB (" + std::to_string(kMinCaptureGrowthBytes) +
                    ".." + std::to_string(kMaxCaptureGrowthBytes) + " bytes)");
  }
  if (s.near_limit_percent > kMaxNearLimitPercent) {
    return Fail(ErrorCode::kInvalidArgument,
                "near-limit share " + std::to_string(s.near_limit_percent) +
                    "% is outside 1..99%");
  }
  if (s.keep < kMinCaptureKeep || s.keep > kMaxCaptureKeep) {
    return Fail(ErrorCode::kInvalidArgument, "captures to keep " + std::to_string(s.keep) +
                                                 " is outside " + std::to_string(kMinCaptureKeep) +
                                                 ".." + std::to_string(kMaxCaptureKeep));
  }
  return {};
}

bool NearLimitDue(uint64_t usage, uint64_t limit, uint32_t percent) {
  // floor(limit * percent / 100) without overflowing 64 bits.
  const uint64_t threshold = limit / 100 * percent + limit % 100 * percent / 100;
  return usage >= threshold;
}

uint32_t NextNearLimitPercent(uint64_t usage, uint64_t limit, uint32_t percent) {
  uint32_t next = percent;
  while (next <= 100 && NearLimitDue(usage, limit, next)) next += kNearLimitStepPercent;
  return next;
}

Result<CgroupMemoryLimit> RequireMemoryLimit() {
  auto limit = ReadCgroupMemoryLimit();
  if (!limit) {
    return Fail(ErrorCode::kFailedPrecondition,
                "cannot arm near-limit capture: the memory cgroup of this process cannot be "
                "read: " + limit.error().message);
  }
  if (!limit->has_value()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "cannot arm near-limit capture: no memory limit applies to this process (no "
                "cgroup v2 memory.max or memory.high, or v1 memory.limit_in_bytes, below "
                "\"max\" on its cgroup or an ancestor)");
  }
  return **limit;
}

namespace {

// The profiler captures are written with: jemalloc's own where it profiles,
// memprof's sampler where the allocator cannot sample. A tcmalloc that
// samples by itself has captures of its own neither.
Result<HeapProfiler*> CaptureProfiler(const Allocator& allocator) {
  auto profiler = allocator.ReadyProfiler();
  if (!profiler) return Fail(profiler.error());
  if (*profiler == &MemprofSampler()) return *profiler;
  if (auto jemalloc = RequireHeapProfiling(allocator); !jemalloc) return Fail(jemalloc.error());
  return *profiler;
}

}  // namespace

Result<uint64_t> CaptureWatcher::AllocatedBytes() const {
  if (const JemallocControl* jemalloc = allocator_.Jemalloc()) return jemalloc->ReadAllocated();
  auto summary = allocator_.Summary();
  if (!summary) return Fail(summary.error());
  return summary->allocated;
}

CaptureWatcher::CaptureWatcher(const Allocator& allocator, std::chrono::milliseconds poll,
                               StateChanges* changes)
    : allocator_(allocator), poll_(poll), changes_(changes) {}

CaptureWatcher::~CaptureWatcher() { Disarm(); }

Result<CaptureState> CaptureWatcher::Arm(const CaptureSettings& settings) {
  if (auto ok = CheckCaptureSettings(settings); !ok) return Fail(ok.error());
  auto profiler = CaptureProfiler(allocator_);
  if (!profiler) return Fail(profiler.error());
  auto allocated = AllocatedBytes();
  if (!allocated) {
    return Fail(ErrorCode::kFailedPrecondition,
                "cannot arm peak capture: the allocator's allocated bytes are not "
                "available: " + allocated.error().message);
  }
  std::optional<CgroupMemoryLimit> limit;
  if (settings.near_limit_percent != 0) {
    auto required = RequireMemoryLimit();
    if (!required) return Fail(required.error());
    limit = *required;
  }
  std::lock_guard life(lifecycle_mu_);
  keeper_.SetKeep(settings.keep);
  {
    std::lock_guard lock(mu_);
    armed_ = true;
    settings_ = settings;
    high_water_ = *allocated;
    profiler_ = *profiler;
    limit_ = limit;
    next_near_percent_ = settings.near_limit_percent;
    close_to_limit_ = false;  // the first poll says
    ++arm_generation_;
    if (!running_) StartThreadLocked();
  }
  cv_.notify_all();
  LogArmed(settings, *allocated, limit);
  Changed();
  return State();
}

void CaptureWatcher::LogArmed(const CaptureSettings& settings, uint64_t allocated,
                              const std::optional<CgroupMemoryLimit>& limit) {
  if (settings.growth_bytes != 0) {
    Logger().info("peak capture armed: a heap profile each time allocated bytes pass {} by {}",
                  allocated, settings.growth_bytes);
  }
  if (limit) {
    Logger().info(
        "near-limit capture armed: a heap profile at {}% of cgroup {}'s {} ({} bytes; {} used), "
        "then every further {}%",
        settings.near_limit_percent, limit->cgroup, limit->source, limit->limit_bytes,
        limit->usage_bytes, kNearLimitStepPercent);
  }
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
  if (!was_armed) return;
  Logger().info("peak capture disarmed; captures taken are kept");
  Changed();
}

void CaptureWatcher::Changed() {
  if (changes_ != nullptr) changes_->Changed();
}

CaptureState CaptureWatcher::State() {
  CaptureState state;
  {
    std::lock_guard lock(mu_);
    state.armed = armed_;
    state.growth_bytes = armed_ ? settings_.growth_bytes : 0;
    state.high_water_bytes = armed_ ? high_water_ : 0;
    state.near_limit_percent = armed_ ? settings_.near_limit_percent : 0;
    state.next_near_limit_percent =
        armed_ && settings_.near_limit_percent != 0 ? next_near_percent_ : 0;
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
  uint64_t tick = 0;
  while (armed_) {
    // Close to the limit, the cgroup is looked at ten times as often; the
    // allocator, as before.
    const bool fast = close_to_limit_;
    cv_.wait_for(lock, fast ? poll_ / kNearLimitPollDivisor : poll_);
    if (!armed_) break;
    PollOnce(lock, *profiler_, !fast || ++tick % kNearLimitPollDivisor == 0);
  }
  running_ = false;
  lock.unlock();
  Changed();  // disarmed, by Disarm() or because profiling ended
}

// One look at the cgroup and, when `full`, at the allocator, with `lock` (on
// mu_) released while they are read and while a capture is written.
void CaptureWatcher::PollOnce(std::unique_lock<std::mutex>& lock, HeapProfiler& profiler,
                              bool full) {
  const uint64_t generation = arm_generation_;
  const uint64_t high_water = high_water_;
  const CaptureSettings settings = settings_;
  std::optional<CgroupMemoryLimit> limit = limit_;
  const uint32_t next_near = next_near_percent_;
  lock.unlock();
  const bool active = !full || profiler.Active();
  auto allocated = active && full ? AllocatedBytes() : Result<uint64_t>(0);
  const bool grown = full && active && allocated && settings.growth_bytes != 0 &&
                     CaptureDue(*allocated, high_water, settings.growth_bytes);
  const bool near = active && allocated && NearLimitCaptureDue(limit, next_near, full);
  if (near && !full) allocated = AllocatedBytes();  // for the capture's record
  if ((grown || near) && allocated) {
    Capture(profiler, CaptureInfo{.allocated_bytes = *allocated,
                                  .trigger = near ? CaptureTrigger::kNearLimit
                                                  : CaptureTrigger::kGrowth,
                                  .cgroup_usage_bytes = limit ? limit->usage_bytes : 0,
                                  .cgroup_limit_bytes = limit ? limit->limit_bytes : 0});
  }
  lock.lock();
  if (generation != arm_generation_) return;  // re-armed meanwhile: its mark stands
  if (!active) {
    armed_ = false;
    Logger().info("peak capture disarmed: profiling is no longer active");
    return;
  }
  if (grown) high_water_ = std::max(high_water_, *allocated);
  limit_ = limit;
  close_to_limit_ = limit && NearLimitDue(limit->usage_bytes, limit->limit_bytes,
                                          settings.near_limit_percent -
                                              std::min(settings.near_limit_percent,
                                                       kNearLimitApproachPercent));
  if (!limit) return;
  if (near) {
    next_near_percent_ = NextNearLimitPercent(limit->usage_bytes, limit->limit_bytes,
                                              settings.near_limit_percent);
  } else if (!NearLimitDue(limit->usage_bytes, limit->limit_bytes,
                           settings.near_limit_percent - std::min(settings.near_limit_percent,
                                                                  kNearLimitStepPercent))) {
    next_near_percent_ = settings.near_limit_percent;  // fell back: the next approach starts over
  }
}

bool CaptureWatcher::NearLimitCaptureDue(std::optional<CgroupMemoryLimit>& limit,
                                         uint32_t next_percent, bool full) {
  if (!limit) return false;
  auto fresh = full ? RefreshCgroupMemoryLimit(*limit) : RefreshCgroupMemoryUsage(*limit);
  if (!fresh) {
    // The level's limit was lifted or its cgroup is gone (the process was
    // moved): find the one that applies now, if any.
    auto again = ReadCgroupMemoryLimit();
    if (!again || !again->has_value()) {
      Logger().warn("near-limit capture: {}; no memory limit applies now, watching stops",
                    fresh.error().message);
      limit.reset();
      return false;
    }
    limit = **again;
  }
  return next_percent <= 100 && NearLimitDue(limit->usage_bytes, limit->limit_bytes, next_percent);
}

void CaptureWatcher::Capture(HeapProfiler& profiler, CaptureInfo info) {
  const auto start = std::chrono::steady_clock::now();
  info.created_unix_ms = NowUnixMs();
  info.sample_interval_bytes = profiler.SampleInterval();
  auto file = CreateDumpFile();
  OwnedFd owned(file ? std::move(*file) : Fd());
  if (!owned.valid()) {
    Logger().warn("peak capture skipped: {}",
                  file ? "cannot keep the capture's descriptor" : file.error().message);
    return;
  }
  const int number = keeper_.BeginCapture(std::move(owned));
  auto size = profiler.WriteInto(number);
  if (!size) {
    keeper_.Abandon(number);
    Logger().warn("peak capture failed: {}", size.error().message);
    return;
  }
  info.size_bytes = *size;
  info = keeper_.Add(number, info);
  Changed();
  Logger().info("{} capture #{}: allocated {} bytes{}; {}-byte profile in {} ms",
                info.trigger == CaptureTrigger::kNearLimit ? "near-limit" : "peak",
                info.sequence, info.allocated_bytes,
                info.cgroup_limit_bytes == 0
                    ? std::string()
                    : ", cgroup usage " + std::to_string(info.cgroup_usage_bytes) + " of " +
                          std::to_string(info.cgroup_limit_bytes),
                info.size_bytes,
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - start)
                    .count());
}

}  // namespace memprof::agent
