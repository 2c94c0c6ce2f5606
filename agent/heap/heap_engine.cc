#include "agent/heap/heap_engine.h"

#include "agent/allocators/allocator_detection.h"

namespace memprof::agent {
namespace {

ProcessIdentity IdentityOf(const HeapEngineOptions& options) {
  ProcessIdentity identity = CurrentProcessIdentity(options.malloc_conf);
  if (options.pid != 0) identity.pid = options.pid;
  if (options.started_unix_ms != 0) identity.started_unix_ms = options.started_unix_ms;
  identity.started_by = options.started_by;
  return identity;
}

}  // namespace

HeapEngine::HeapEngine(const HeapEngineOptions& options)
    : identity_(IdentityOf(options)),
      allocator_(DetectAllocator()),
      profiling_(*allocator_),
      dumps_(*allocator_, options.dump_limits),
      captures_(*allocator_, kCapturePollInterval, &changes_),
      allocations_(*allocator_, profiling_, identity_.pid, &changes_) {}

}  // namespace memprof::agent
