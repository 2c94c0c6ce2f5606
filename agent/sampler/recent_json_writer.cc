#include "agent/sampler/recent_json_writer.h"

namespace memprof::agent {
namespace {

void PutField(TextWriter& w, const char* key, uint64_t value) {
  w.Put(",\"");
  w.Put(key);
  w.Put("\":");
  w.Decimal(value);
}

void PutRecord(TextWriter& w, const RecentRecord& r, const StackTable::Stack& stack) {
  w.Put("{\"size\":");
  w.Decimal(r.size);
  PutField(w, "usize", r.size);
  w.Put(r.dalloc_tid != 0 ? ",\"released\":true" : ",\"released\":false");
  PutField(w, "alloc_thread_uid", r.alloc_tid);
  PutField(w, "alloc_time", r.alloc_ns);
  w.Put(",\"alloc_trace\":[");
  for (uint32_t i = 0; i < stack.depth; ++i) {
    w.Put(i == 0 ? "\"" : ",\"");
    w.Hex(stack.frames[i]);
    w.Put("\"");
  }
  w.Put("]");
  if (r.dalloc_tid != 0) {
    PutField(w, "dalloc_thread_uid", r.dalloc_tid);
    PutField(w, "dalloc_time", r.dalloc_ns);
  }
  w.Put("}");
}

}  // namespace

void WriteRecentJson(TextWriter& w, uint64_t interval, uint64_t bound, const RecentRecord* records,
                     uint64_t count, const StackTable& stacks) {
  w.Put("{\"sample_interval\":");
  w.Decimal(interval);
  PutField(w, "recent_alloc_max", bound);
  w.Put(",\"recent_alloc\":[");
  bool first = true;
  for (uint64_t i = 0; i < count; ++i) {
    const StackTable::Stack* stack = stacks.Find(records[i].stack);
    if (stack == nullptr) continue;
    if (!first) w.Put(",");
    first = false;
    PutRecord(w, records[i], *stack);
  }
  w.Put("]}");
}

}  // namespace memprof::agent
