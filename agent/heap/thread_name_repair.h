#ifndef MEMPROF_AGENT_HEAP_THREAD_NAME_REPAIR_H_
#define MEMPROF_AGENT_HEAP_THREAD_NAME_REPAIR_H_

#include <string>
#include <string_view>

#include "agent/allocators/jemalloc_control.h"

namespace memprof::agent {

// jemalloc 5.3 writes a thread's profiling name (thread.prof.name: any
// printable text, `"` and `\` included) into its prof_recent JSON as it is,
// so one such name makes the whole allocation profile invalid JSON, which
// `report` rightly refuses. ThreadNameRepair sits between
// experimental.prof_recent.alloc_dump and the profile and escapes `"`, `\`
// and control bytes inside the values of "alloc_thread_name" and
// "dalloc_thread_name"; everything else passes through byte for byte. A
// value's end is found by the key jemalloc always writes right after it
// ("alloc_time", "dalloc_time"), since its closing quote cannot be trusted.
//
// Holds at most a key's length of text between calls, plus a name while it
// is being read. Not thread-safe: one per dump.
class ThreadNameRepair {
 public:
  ThreadNameRepair(JemallocControl::WriteCb write, void* opaque) : write_(write), opaque_(opaque) {}

  // jemalloc's write callback: `self` is a ThreadNameRepair.
  static void Write(void* self, const char* text);

  void Feed(std::string_view text);
  // Passes on what is held (a name that never ended: as it came).
  void Finish();

 private:
  void Emit(std::string_view text);
  // Outside a name: passes on all but a possible start of a key.
  void ScanText();
  // Inside a name: waits for the key that follows it.
  bool ScanName();

  JemallocControl::WriteCb write_;
  void* opaque_;
  std::string held_;
  std::string_view end_;  // inside a name: what follows its value; empty outside
};

// `name` with `"`, `\` and control bytes escaped for a JSON string.
std::string EscapeJsonString(std::string_view name);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_THREAD_NAME_REPAIR_H_
