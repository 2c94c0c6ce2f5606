#include "agent/allocators/allocator.h"

#include "agent/allocators/sampler_heap_profiler.h"

#include <string>

namespace memprof::agent {

Result<HeapProfiler*> Allocator::ReadyProfiler() const { return &MemprofSampler(); }

Error NoHeapProfiler(AllocatorKind kind) {
  return Error(ErrorCode::kFailedPrecondition,
               std::string("this process does not use jemalloc (its allocator is ") +
                   AllocatorKindName(kind) +
                   "), so its heap cannot be profiled; restart it under "
                   "`memprofctl run -- <command>`, which preloads jemalloc ready for profiling");
}

const char* AllocatorKindName(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kJemalloc: return "jemalloc";
    case AllocatorKind::kGlibc: return "glibc";
    case AllocatorKind::kOther: return "other";
    case AllocatorKind::kTcmalloc: return "tcmalloc";
  }
  return "other";
}

}  // namespace memprof::agent
