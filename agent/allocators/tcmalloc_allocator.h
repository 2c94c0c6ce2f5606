#ifndef MEMPROF_AGENT_ALLOCATORS_TCMALLOC_ALLOCATOR_H_
#define MEMPROF_AGENT_ALLOCATORS_TCMALLOC_ALLOCATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/allocators/allocator.h"
#include "agent/allocators/tcmalloc_control.h"

namespace memprof::agent {

// gperftools' tcmalloc as the process allocator: its numeric properties
// mapped onto the summary, GetStats for the report, ReleaseFreeMemory for
// purge (docs/user-guide.md, "tcmalloc targets").
std::unique_ptr<Allocator> MakeTcmallocAllocator(TcmallocControl control);

// tcmalloc's properties (by their names) mapped onto the summary where the
// meaning matches jemalloc's: allocated = bytes the application holds;
// active = bytes in spans that hold objects (the heap less the page heap's
// free and unmapped spans); resident and mapped = generic.total_physical_bytes
// (heap and metadata, less what was given back); metadata = what that adds
// to the heap; retained = spans given back to the OS but kept as address
// space (pageheap_unmapped_bytes), as jemalloc's retained.
HeapSummary TcmallocSummary(const std::vector<std::pair<std::string, uint64_t>>& properties);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_TCMALLOC_ALLOCATOR_H_
