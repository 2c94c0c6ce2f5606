#include "agent/allocators/other_allocator.h"

#include "agent/allocators/sampler_heap_profiler.h"

namespace memprof::agent {
namespace {

class OtherAllocator final : public Allocator {
 public:
  AllocatorInfo Info() const override {
    AllocatorInfo info;
    DescribeMemprofSampler(info);
    return info;
  }
  Result<HeapSummary> Summary() const override {
    return Fail(ErrorCode::kFailedPrecondition,
                "the process allocator is neither jemalloc, tcmalloc nor glibc malloc; no statistics");
  }
  Result<AllocatorReport> Report(ReportFormat) const override { return Fail(Summary().error()); }
  Result<uint64_t> UnusedBytes() const override { return Fail(Summary().error()); }
  Result<void> Purge() const override {
    return Fail(ErrorCode::kFailedPrecondition,
                "the process allocator is neither jemalloc, tcmalloc nor glibc malloc; memprof cannot "
                "make it give memory back");
  }
  const char* PurgeMethod() const override { return ""; }
};

}  // namespace

std::unique_ptr<Allocator> MakeOtherAllocator() { return std::make_unique<OtherAllocator>(); }

}  // namespace memprof::agent
