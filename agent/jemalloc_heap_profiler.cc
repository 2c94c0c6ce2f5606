#include "agent/jemalloc_heap_profiler.h"

#include "agent/dump_streamer.h"

namespace memprof::agent {

Result<uint64_t> JemallocHeapProfiler::WriteInto(int fd) { return WriteProfileInto(jemalloc_, fd); }

}  // namespace memprof::agent
