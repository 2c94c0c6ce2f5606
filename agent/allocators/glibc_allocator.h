#ifndef MEMPROF_AGENT_ALLOCATORS_GLIBC_ALLOCATOR_H_
#define MEMPROF_AGENT_ALLOCATORS_GLIBC_ALLOCATOR_H_

#include <memory>

#include "agent/allocators/allocator.h"

namespace memprof::agent {

// The glibc malloc back-end: mallinfo2() for the summary, malloc_info() for
// the report, malloc_trim(0) to purge. Heap profiles by memprof's own sampler.
std::unique_ptr<Allocator> MakeGlibcAllocator();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_GLIBC_ALLOCATOR_H_
