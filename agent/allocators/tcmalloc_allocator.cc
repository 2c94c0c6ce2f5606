#include "agent/allocators/tcmalloc_allocator.h"

#include "agent/allocators/sampler_heap_profiler.h"

#include <algorithm>

#include "agent/allocators/tcmalloc_heap_profiler.h"

namespace memprof::agent {
namespace {

uint64_t ValueOf(const std::vector<std::pair<std::string, uint64_t>>& properties,
                 const char* name) {
  for (const auto& [key, value] : properties) {
    if (key == name) return value;
  }
  return 0;
}

// a - b, or 0 when the figures (read one after the other) cross.
uint64_t Less(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

class TcmallocAllocator final : public Allocator {
 public:
  explicit TcmallocAllocator(TcmallocControl control)
      : control_(std::move(control)), profiler_(control_) {}

  AllocatorInfo Info() const override {
    AllocatorInfo info;
    info.kind = AllocatorKind::kTcmalloc;
    info.version = control_.Version();
    info.profiling_supported = control_.SamplerBuiltIn();
    info.sample_interval_bytes = control_.SamplePeriod();
    info.profiling_enabled = info.sample_interval_bytes != 0;
    info.profiling_active = profiler_.Active();
    if (info.profiling_supported && info.profiling_enabled) {
      info.sampler = "tcmalloc";
    } else {
      DescribeMemprofSampler(info);
    }
    return info;
  }
  // tcmalloc's own sampler where it samples (libtcmalloc started with
  // TCMALLOC_SAMPLE_PARAMETER); memprof's for libtcmalloc_minimal, which has
  // none, and for a libtcmalloc that was not told to sample.
  Result<HeapProfiler*> ReadyProfiler() const override {
    if (!control_.SamplerBuiltIn() || control_.SamplePeriod() == 0) return &MemprofSampler();
    return &profiler_;
  }
  Result<HeapSummary> Summary() const override { return TcmallocSummary(control_.Properties()); }
  // tcmalloc has only its text report.
  Result<AllocatorReport> Report(ReportFormat) const override {
    auto text = control_.StatsReport();
    if (!text) return Fail(text.error());
    return AllocatorReport{ReportFormat::kText, std::move(*text)};
  }
  std::vector<std::pair<std::string, uint64_t>> Properties() const override {
    return control_.Properties();
  }
  // Free spans of the page heap: what ReleaseFreeMemory gives back.
  Result<uint64_t> UnusedBytes() const override {
    return control_.Property("tcmalloc.pageheap_free_bytes");
  }
  Result<void> Purge() const override {
    control_.ReleaseFreeMemory();
    return {};
  }
  const char* PurgeMethod() const override { return "MallocExtension::ReleaseFreeMemory()"; }

 private:
  TcmallocControl control_;
  mutable TcmallocHeapProfiler profiler_;  // the activation: state of the agent's own
};

}  // namespace

std::unique_ptr<Allocator> MakeTcmallocAllocator(TcmallocControl control) {
  return std::make_unique<TcmallocAllocator>(std::move(control));
}

HeapSummary TcmallocSummary(const std::vector<std::pair<std::string, uint64_t>>& properties) {
  const uint64_t heap = ValueOf(properties, "generic.heap_size");
  const uint64_t free_bytes = ValueOf(properties, "tcmalloc.pageheap_free_bytes");
  const uint64_t unmapped = ValueOf(properties, "tcmalloc.pageheap_unmapped_bytes");
  const uint64_t physical = ValueOf(properties, "generic.total_physical_bytes");
  HeapSummary s;
  s.allocated = ValueOf(properties, "generic.current_allocated_bytes");
  s.active = std::max(s.allocated, Less(heap, free_bytes + unmapped));
  s.resident = physical;
  s.mapped = physical;
  s.metadata = Less(physical, Less(heap, unmapped));
  s.retained = unmapped;
  return s;
}

}  // namespace memprof::agent
