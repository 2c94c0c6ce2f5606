#ifndef MEMPROF_AGENT_ALLOCATORS_ALLOCATOR_DETECTION_H_
#define MEMPROF_AGENT_ALLOCATORS_ALLOCATOR_DETECTION_H_

#include <memory>

#include "agent/allocators/allocator.h"

namespace memprof::agent {

// Detects the allocator serving malloc() in this process: jemalloc when
// JemallocControl::Detect() finds it, tcmalloc when TcmallocControl::Detect()
// does, glibc when malloc comes from libc, otherwise kOther (summary and
// report unavailable).
std::unique_ptr<Allocator> DetectAllocator();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_ALLOCATOR_DETECTION_H_
