#ifndef MEMPROF_AGENT_HEAP_HEAP_ENGINE_H_
#define MEMPROF_AGENT_HEAP_HEAP_ENGINE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "agent/allocators/allocator.h"
#include "agent/heap/allocation_recorder.h"
#include "agent/heap/capture_watcher.h"
#include "agent/heap/dump_streamer.h"
#include "agent/heap/process_identity.h"
#include "agent/heap/profiling_controller.h"
#include "agent/heap/state_changes.h"

namespace memprof::agent {

struct HeapEngineOptions {
  // MALLOC_CONF as the process started with it (what Status shows).
  std::string malloc_conf;
  // The process as the core saw it start; 0 keeps what /proc says now.
  pid_t pid = 0;
  int64_t started_unix_ms = 0;
  std::string started_by;  // AgentConfig::started_by
  DumpLimits dump_limits;
};

// Everything the service serves, wired in this one place: who the process
// is, its allocator (detected once), the profiling window, the dump queue
// and the peak capture. The module's AgentServer holds one for the life of
// the agent (it outlives gRPC: a window ends and captures are taken without
// a client); the unit tests build theirs the same way.
//
// Thread-safety: as each part's (the parts are; the engine adds nothing).
class HeapEngine {
 public:
  explicit HeapEngine(const HeapEngineOptions& options);
  HeapEngine(const HeapEngine&) = delete;
  HeapEngine& operator=(const HeapEngine&) = delete;

  const ProcessIdentity& identity() const { return identity_; }
  const Allocator& allocator() const { return *allocator_; }
  ProfilingController& profiling() { return profiling_; }
  DumpStreamer& dumps() { return dumps_; }
  CaptureWatcher& captures() { return captures_; }
  AllocationRecorder& allocations() { return allocations_; }
  // Told of each change to captures and allocation windows (Watch).
  StateChanges& changes() { return changes_; }

 private:
  ProcessIdentity identity_;
  std::unique_ptr<Allocator> allocator_;
  // Each holds a reference to *allocator_: declared after it, gone before it.
  ProfilingController profiling_;
  DumpStreamer dumps_;
  StateChanges changes_;  // before those that tell it
  CaptureWatcher captures_;
  AllocationRecorder allocations_;  // uses profiling_: declared after it
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_HEAP_ENGINE_H_
