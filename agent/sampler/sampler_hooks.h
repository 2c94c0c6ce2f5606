#ifndef MEMPROF_AGENT_SAMPLER_SAMPLER_HOOKS_H_
#define MEMPROF_AGENT_SAMPLER_SAMPLER_HOOKS_H_

#include <cstddef>

#include "agent/sampler/got_patcher.h"
#include "agent/sampler/sampler_state.h"

namespace memprof::agent {

// The interceptors of the malloc family, of operator new/delete where the
// allocator defines its own, and of dlopen/dlclose (so that modules loaded
// while active are patched too), as GotPatcher installs them. Entry 0 is malloc. Each calls the host's own function, resolved in
// the global scope (HostSymbol) once, before any hook is live; allocation
// hooks then count the bytes down (sample_countdown.h) and, on a sample,
// record the block and its stack; free hooks forget a sampled block.
//
// The first call makes the table; ResolveHostFunctions fills `real`.
HookSpec* SamplerHooks(size_t* count);
void ResolveHostFunctions();

// The state the hooks use; set once, before the first patch.
void InstallSamplerState(SamplerState* state);

// While one lives, the calling thread's allocations are not sampled: the
// sampler's own work (activation, dumps) on whatever thread it runs.
class NotSampledByMemprof {
 public:
  NotSampledByMemprof();
  ~NotSampledByMemprof();
  NotSampledByMemprof(const NotSampledByMemprof&) = delete;
  NotSampledByMemprof& operator=(const NotSampledByMemprof&) = delete;

 private:
  bool was_busy_;
};

// Whether the calling thread is one of the agent's ("memprof-…", as every
// thread of the agent and gRPC's are named): its samples are dropped.
bool OnAgentThread();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_SAMPLER_HOOKS_H_
