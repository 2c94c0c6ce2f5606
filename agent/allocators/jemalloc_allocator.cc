#include "agent/allocators/jemalloc_allocator.h"

#include <string>
#include <utility>

#include "agent/allocators/jemalloc_heap_profiler.h"
#include "agent/allocators/sampler_heap_profiler.h"

namespace memprof::agent {
namespace {

class JemallocAllocator final : public Allocator {
 public:
  explicit JemallocAllocator(JemallocControl control) : control_(control), profiler_(control_) {}

  AllocatorInfo Info() const override {
    AllocatorInfo info;
    info.kind = AllocatorKind::kJemalloc;
    info.version = control_.Version();
    info.profiling_supported = control_.ProfilingSupported();
    info.profiling_enabled = info.profiling_supported && control_.ProfilingEnabled();
    info.profiling_active = info.profiling_enabled && control_.ProfilingActive();
    info.sample_interval_bytes = info.profiling_enabled ? control_.SampleInterval() : 0;
    if (info.profiling_enabled) {
      info.sampler = "jemalloc";
    } else {
      DescribeMemprofSampler(info);
    }
    return info;
  }
  Result<HeapSummary> Summary() const override { return control_.ReadSummary(); }
  Result<AllocatorReport> Report(ReportFormat wanted) const override {
    const bool json = wanted == ReportFormat::kJson;
    auto text = control_.StatsReport(json);
    if (!text) return Fail(text.error());
    return AllocatorReport{json ? ReportFormat::kJson : ReportFormat::kText, std::move(*text)};
  }
  const JemallocControl* Jemalloc() const override { return &control_; }
  // jemalloc's own profiler where opt.prof was set at start-up; memprof's
  // sampler where it was not, or where jemalloc was built without it.
  Result<HeapProfiler*> ReadyProfiler() const override {
    if (!RequireHeapProfiling(*this)) return &MemprofSampler();
    return &profiler_;
  }
  Result<uint64_t> UnusedBytes() const override { return control_.UnusedBytes(); }
  Result<void> Purge() const override { return control_.PurgeAllArenas(); }
  const char* PurgeMethod() const override { return "mallctl arena.4096.purge"; }

 private:
  JemallocControl control_;
  mutable JemallocHeapProfiler profiler_;  // stateless over control_
};

}  // namespace

std::unique_ptr<Allocator> MakeJemallocAllocator(JemallocControl control) {
  return std::make_unique<JemallocAllocator>(control);
}

Result<const JemallocControl*> RequireHeapProfiling(const Allocator& allocator) {
  const JemallocControl* jemalloc = allocator.Jemalloc();
  if (jemalloc == nullptr) return Fail(NoHeapProfiler(allocator.Info().kind));
  if (!jemalloc->ProfilingSupported()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "this process's jemalloc (" + jemalloc->Version() +
                    ") was built without heap profiling support (config.prof=false); restart "
                    "it with a jemalloc built with --enable-prof, e.g. under `memprofctl run`");
  }
  if (!jemalloc->ProfilingEnabled()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "heap profiling was not enabled when the process started; restart it with "
                "MALLOC_CONF=prof:true,prof_active:false (or use `memprofctl run`)");
  }
  return jemalloc;
}

}  // namespace memprof::agent
