#ifndef MEMPROF_AGENT_ALLOCATORS_HEAP_SUMMARY_H_
#define MEMPROF_AGENT_ALLOCATORS_HEAP_SUMMARY_H_

#include <cstdint>

namespace memprof::agent {

// Allocator statistics summary, in bytes, in jemalloc's terms (jemalloc:
// stats.* after an epoch refresh; the other back-ends map theirs onto it).
struct HeapSummary {
  uint64_t allocated = 0;
  uint64_t active = 0;
  uint64_t metadata = 0;
  uint64_t resident = 0;
  uint64_t mapped = 0;
  uint64_t retained = 0;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_HEAP_SUMMARY_H_
