#ifndef MEMPROF_AGENT_SAMPLER_RECENT_JSON_WRITER_H_
#define MEMPROF_AGENT_SAMPLER_RECENT_JSON_WRITER_H_

#include <cstdint>

#include "agent/sampler/heap_v2_writer.h"
#include "agent/sampler/recent_ring.h"
#include "agent/sampler/stack_table.h"

namespace memprof::agent {

// Writes an allocation window's records as the one line of JSON that
// jemalloc 5.3's experimental.prof_recent.alloc_dump writes, the part of an
// allocation profile `report` reads (docs/protocol.md, "Allocation
// profiles"):
//   {"sample_interval":N,"recent_alloc_max":N,"recent_alloc":[{"size":N,
//    "usize":N,"released":B,"alloc_thread_uid":N,"alloc_time":N,
//    "alloc_trace":["0x…",…][,"dalloc_thread_uid":N,"dalloc_time":N]},…]}
// `usize` is the requested size (the sampler counts what was asked for);
// thread uids are kernel thread ids; a free has no trace (the reader takes
// none). `released` holds at the time of the dump. Records whose stack is
// gone are left out. Never allocates.
void WriteRecentJson(TextWriter& w, uint64_t interval, uint64_t bound, const RecentRecord* records,
                     uint64_t count, const StackTable& stacks);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_RECENT_JSON_WRITER_H_
