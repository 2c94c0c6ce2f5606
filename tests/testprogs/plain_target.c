// plain_target: a C program linked with jemalloc only. The integration tests
// start it with libmemprof_agent.so in LD_PRELOAD (or under `memprofctl run`).
// It retains 64 KiB blocks in a bounded ring (PlainTargetAllocate) and leaks
// 4 KiB every tick (PlainTargetLeak), until SIGTERM/SIGINT (steady_load.h).

#include <stdlib.h>

#include "tests/testprogs/steady_load.h"

// Replaces the oldest ring slot with a fresh, touched block.
__attribute__((noinline)) static int PlainTargetAllocate(void) {
  return SteadyLoadKeepBlock(malloc(kSteadyLoadBlockBytes));
}

// Never frees: the steadily growing "leak" the tests can look for.
__attribute__((noinline)) static int PlainTargetLeak(void) {
  SteadyLoadBeforeLeak();
  return SteadyLoadKeepLeak(malloc(kSteadyLoadLeakBytes));
}

int main(void) { return SteadyLoadMain("plain_target", PlainTargetAllocate, PlainTargetLeak); }
