#ifndef MEMPROF_AGENT_ALLOCATORS_OTHER_ALLOCATOR_H_
#define MEMPROF_AGENT_ALLOCATORS_OTHER_ALLOCATOR_H_

#include <memory>

#include "agent/allocators/allocator.h"

namespace memprof::agent {

// An allocator memprof does not know: it says so for every statistic, purge
// and profile (kFailedPrecondition), and status shows kind "other".
std::unique_ptr<Allocator> MakeOtherAllocator();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_OTHER_ALLOCATOR_H_
