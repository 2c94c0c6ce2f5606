#ifndef MEMPROF_AGENT_SAMPLER_SAMPLER_H_
#define MEMPROF_AGENT_SAMPLER_SAMPLER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/sampler/heap_v2_writer.h"
#include "agent/sampler/sampler_state.h"
#include "common/result.h"

namespace memprof::agent {

struct SamplerOptions {
  uint64_t sample_interval = kDefaultSampleInterval;  // mean bytes between samples
  // Table sizes, fixed at the first activation (later ones keep them).
  size_t max_live_samples = size_t{1} << 17;  // 3 MiB of address space
  size_t max_stacks = size_t{1} << 13;        // 4.3 MiB of address space
  // Leave alone the module the sampler is linked into (the agent's server);
  // the unit tests, which link it into their executable, turn this off.
  bool skip_own_module = true;
};

struct SamplerStatus {
  bool active = false;
  uint64_t sample_interval = 0;
  int64_t since_unix_ms = 0;     // the samples held began then (0: none yet)
  uint64_t samples = 0;          // sampled since the last reset
  uint64_t live_samples = 0;     // of them, not freed yet
  uint64_t live_overflows = 0;   // samples dropped: the live table was full
  uint64_t stack_overflows = 0;  // samples dropped: the stack table was full
  uint64_t stacks = 0;
  uint64_t agent_thread_skips = 0;  // samples on memprof-… threads, dropped
  size_t patched_slots = 0;
  uint32_t patched_modules = 0;
  // The executable defines malloc itself: its own calls are not seen.
  bool executable_allocator = false;
  std::vector<std::string> not_intercepted;  // what could not be patched, and why
};

// memprof's own heap sampler, for processes whose allocator cannot sample
// (docs/architecture.md, "The sampler"): jemalloc's sampling
// (a per-thread Poisson countdown over bytes), fed by GOT hooks on the malloc
// family of every loaded module, and dumped as a jemalloc heap_v2 profile.
// Nothing is patched, mapped or hooked before the first Activate. Deactivate
// stops sampling and puts back every slot of the allocating functions; the
// samples are kept until Reset, and so that they stay true (a sample freed
// after deactivation leaves the profile, as jemalloc's do), the slots of the
// functions that free (free, realloc, dallocx, mi_free, …) stay hooked while
// any sample lives. Reset drops the samples and, deactivated, puts those
// back too: after Deactivate and Reset every slot is as it was.
//
// Process-wide; thread-safe. fork(): the child inherits the state, hooks
// and samples of the parent, consistent (the fork handlers below hold every
// lock of the sampler across the fork), but not a recording: its window is
// the parent's.
class Sampler {
 public:
  // Patches every loaded module and starts sampling; idempotent (a new
  // interval applies from each thread's next sample).
  [[nodiscard]] static Result<void> Activate(const SamplerOptions& options);
  // Stops sampling; puts back the slots it changed, but those of the
  // freeing functions while samples live (see above).
  static void Deactivate();
  // Drops every sample (and stack); deactivated, puts back every slot left.
  static void Reset();
  // Writes the live samples into `fd` as a heap_v2 profile; its size.
  [[nodiscard]] static Result<uint64_t> WriteProfile(int fd);
  static SamplerStatus Status();

  // Allocation windows (agent/heap/allocation_recorder.h). From
  // BeginRecording until EndRecording every sampled allocation, and its
  // free, is also kept in a ring of `capacity` records (recent_ring.h).
  // kFailedPrecondition: a recording runs; kResourceExhausted: no memory.
  [[nodiscard]] static Result<void> BeginRecording(size_t capacity);
  static void EndRecording();
  struct Recording {
    bool on = false;
    uint64_t records = 0;  // held now
    bool lost = false;     // older records were overwritten, or dropped by a reset
  };
  static Recording RecordingState();
  // Writes the records as jemalloc 5.3's prof_recent.alloc_dump writes its
  // own (recent_json_writer.h), into `sink`; kFailedPrecondition if no
  // recording runs.
  [[nodiscard]] static Result<void> WriteRecentAllocations(TextSink sink, void* opaque);
  // fork(): every lock of the sampler is taken in PrepareFork and released
  // (parent) or made anew (child) after, so the child never inherits one
  // held by a thread that does not exist there. Whoever uses the sampler
  // calls these from its own fork handlers, in the order of its locks (the
  // agent's core does: module_abi.h, sampler_fork), or has pthread_atfork
  // call them through RegisterForkHandlers(), once, before any thread that
  // uses the sampler could fork (the unit tests do, at start-up). Not
  // registered lazily: a fork during the registration would run none of
  // them and copy a lock held.
  [[nodiscard]] static Result<void> RegisterForkHandlers();
  static void PrepareFork();
  static void AfterForkInParent();
  static void AfterForkInChild();
  // Whether the block at `p` is a live sample (tests, and doctor's checks).
  static bool IsLiveSample(const void* p);
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_SAMPLER_H_
