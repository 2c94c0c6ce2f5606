#ifndef MEMPROF_AGENT_HEAP_PURGE_H_
#define MEMPROF_AGENT_HEAP_PURGE_H_

#include <cstdint>
#include <string>

#include "agent/allocators/allocator.h"
#include "common/result.h"

namespace memprof::agent {

// The memory of the process at one moment, around a purge.
struct MemoryReading {
  uint64_t rss_bytes = 0;
  HeapSummary summary;
  uint64_t unused_bytes = 0;
};

struct PurgeOutcome {
  MemoryReading before;
  MemoryReading after;
  std::string method;
};

// Reads the process's memory, purges the allocator and reads it again.
[[nodiscard]] Result<PurgeOutcome> PurgeAndMeasure(const Allocator& allocator);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_PURGE_H_
