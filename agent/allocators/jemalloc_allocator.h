#ifndef MEMPROF_AGENT_ALLOCATORS_JEMALLOC_ALLOCATOR_H_
#define MEMPROF_AGENT_ALLOCATORS_JEMALLOC_ALLOCATOR_H_

#include <memory>

#include "agent/allocators/allocator.h"
#include "agent/allocators/jemalloc_control.h"
#include "common/result.h"

namespace memprof::agent {

// The jemalloc back-end: statistics through mallctl, heap profiles through
// jemalloc's own profiler (jemalloc_heap_profiler.h), purge of every arena.
std::unique_ptr<Allocator> MakeJemallocAllocator(JemallocControl control);

// The jemalloc control of an allocator that can take heap profiles now, or a
// kFailedPrecondition Error that says why not and what to do: not jemalloc,
// jemalloc without profiling support, or profiling not enabled at start-up.
[[nodiscard]] Result<const JemallocControl*> RequireHeapProfiling(const Allocator& allocator);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_JEMALLOC_ALLOCATOR_H_
