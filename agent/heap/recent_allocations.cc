#include "agent/heap/recent_allocations.h"

#include <pthread.h>

#include <atomic>
#include <string>

#include "agent/allocators/jemalloc_allocator.h"
#include "agent/allocators/sampler_heap_profiler.h"
#include "agent/heap/thread_name_repair.h"
#include "agent/sampler/sampler.h"

namespace memprof::agent {
namespace {

// For the atfork child handler, without a lock: the bound to put back in a
// child forked during a window (kNoWindow: none open).
constexpr int64_t kNoWindow = -2;
std::atomic<int64_t> g_found_bound{kNoWindow};
std::atomic<const JemallocControl*> g_jemalloc{nullptr};

void StopJemallocRecordingInChild() {
  const int64_t found = g_found_bound.exchange(kNoWindow);
  const JemallocControl* jemalloc = g_jemalloc.load();
  // jemalloc's own child handler ran first (it registered before the agent
  // loaded), so mallctl is usable here.
  if (found != kNoWindow && jemalloc != nullptr) (void)jemalloc->SetRecentAllocMax(found);
}

// jemalloc's experimental.prof_recent: the window sets its bound, and puts
// back the one it found. A child forked during a window gets the parent's
// records and bound (jemalloc's state is copied); the atfork child handler
// puts the bound back there, so that a long-lived worker does not go on
// recording.
class JemallocRecent final : public RecentAllocations {
 public:
  explicit JemallocRecent(const JemallocControl& jemalloc) : jemalloc_(jemalloc) {
    static const int registered = pthread_atfork(nullptr, nullptr, &StopJemallocRecordingInChild);
    (void)registered;
  }

  Result<void> Start(int64_t bound) override {
    auto found = jemalloc_.RecentAllocMax();
    if (!found) return Fail(found.error());
    if (*found < 0) {
      return Fail(ErrorCode::kFailedPrecondition,
                  "this process's jemalloc keeps a record of every sampled allocation "
                  "(opt.prof_recent_alloc_max:-1); an allocation window would bound it and so "
                  "drop records its owner keeps; nothing was changed");
    }
    found_bound_ = *found;
    if (auto r = jemalloc_.SetRecentAllocMax(0); !r) return Fail(r.error());
    if (auto r = jemalloc_.SetRecentAllocMax(bound); !r) {
      (void)jemalloc_.SetRecentAllocMax(found_bound_);
      return Fail(r.error());
    }
    bound_ = bound;
    g_jemalloc.store(&jemalloc_);
    g_found_bound.store(found_bound_);
    return {};
  }

  void Stop() override {
    g_found_bound.store(kNoWindow);
    (void)jemalloc_.SetRecentAllocMax(found_bound_);
  }

  Result<Count> Held() const override {
    auto records = CountRecentAllocations(jemalloc_);
    if (!records) return Fail(records.error());
    return Count{*records, *records >= bound_};
  }

  // Thread names as jemalloc writes them can break the JSON: repaired here.
  Result<void> Dump(JemallocControl::WriteCb write, void* opaque) const override {
    ThreadNameRepair repair(write, opaque);
    auto dumped = jemalloc_.DumpRecentAllocations(&ThreadNameRepair::Write, &repair);
    repair.Finish();
    return dumped;
  }
  ProfClock Clock() const override { return ProfClock::Of(jemalloc_); }
  uint64_t SampleInterval() const override { return jemalloc_.SampleInterval(); }
  bool SamplingActive() const override { return jemalloc_.ProfilingActive(); }

 private:
  const JemallocControl& jemalloc_;
  int64_t found_bound_ = 0;
  int64_t bound_ = 0;
};

// memprof's sampler's ring: mapped for the window, unmapped at its end.
class SamplerRecent final : public RecentAllocations {
 public:
  Result<void> Start(int64_t bound) override {
    return Sampler::BeginRecording(static_cast<size_t>(bound));
  }
  void Stop() override { Sampler::EndRecording(); }
  Result<Count> Held() const override {
    const Sampler::Recording r = Sampler::RecordingState();
    return Count{static_cast<int64_t>(r.records), r.lost};
  }
  Result<void> Dump(JemallocControl::WriteCb write, void* opaque) const override {
    return Sampler::WriteRecentAllocations(write, opaque);
  }
  ProfClock Clock() const override { return ProfClock::Monotonic(); }
  uint64_t SampleInterval() const override { return MemprofSampler().SampleInterval(); }
  bool SamplingActive() const override { return MemprofSampler().Active(); }
};

}  // namespace

Result<std::unique_ptr<RecentAllocations>> RecentAllocationsOf(const Allocator& allocator) {
  if (MemprofSamplerServes(allocator)) {
    return std::unique_ptr<RecentAllocations>(std::make_unique<SamplerRecent>());
  }
  if (allocator.Jemalloc() == nullptr) {
    return Fail(ErrorCode::kFailedPrecondition,
                std::string("allocation profiles need jemalloc's record of recent allocations or "
                            "memprof's own sampler; this process's allocator is ") +
                    AllocatorKindName(allocator.Info().kind) + ", which samples by itself");
  }
  auto jemalloc = RequireHeapProfiling(allocator);
  if (!jemalloc) return Fail(jemalloc.error());
  return std::unique_ptr<RecentAllocations>(std::make_unique<JemallocRecent>(**jemalloc));
}

}  // namespace memprof::agent
