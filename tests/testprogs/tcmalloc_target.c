// tcmalloc_target: a C program linked with gperftools' tcmalloc (libtcmalloc,
// which has the sampler) and nothing else. The integration tests start it with
// libmemprof_agent.so in LD_PRELOAD and TCMALLOC_SAMPLE_PARAMETER set (or
// unset, to see the error). The same steady load as plain_target: a ring of
// 64 KiB blocks (TcmallocTargetAllocate) and a 4 KiB leak every tick
// (TcmallocTargetLeak), until SIGTERM/SIGINT.

#include <stdlib.h>

#include "tests/testprogs/steady_load.h"

// Replaces the oldest ring slot with a fresh, touched block.
__attribute__((noinline)) static int TcmallocTargetAllocate(void) {
  return SteadyLoadKeepBlock(malloc(kSteadyLoadBlockBytes));
}

// Never frees: the steadily growing "leak" the tests can look for.
__attribute__((noinline)) static int TcmallocTargetLeak(void) {
  SteadyLoadBeforeLeak();
  return SteadyLoadKeepLeak(malloc(kSteadyLoadLeakBytes));
}

int main(void) {
  return SteadyLoadMain("tcmalloc_target", TcmallocTargetAllocate, TcmallocTargetLeak);
}
