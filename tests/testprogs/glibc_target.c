// glibc_target: a C program that allocates with glibc's malloc and has no
// jemalloc at all. The integration tests preload libmemprof_agent.so into it
// to check that status and stats still answer and that activate/dump explain
// how to restart it under `memprofctl run` (which preloads jemalloc, so the
// same binary also serves as a "run" target). It retains 64 KiB blocks in a
// bounded ring (GlibcTargetAllocate) and leaks 4 KiB every tick
// (GlibcTargetLeak), until SIGTERM/SIGINT (steady_load.h).

#include <stdlib.h>

#include "tests/testprogs/steady_load.h"

// Replaces the oldest ring slot with a fresh, touched block.
__attribute__((noinline)) static int GlibcTargetAllocate(void) {
  return SteadyLoadKeepBlock(malloc(kSteadyLoadBlockBytes));
}

// Never frees: the steadily growing "leak" the tests can look for.
__attribute__((noinline)) static int GlibcTargetLeak(void) {
  SteadyLoadBeforeLeak();
  return SteadyLoadKeepLeak(malloc(kSteadyLoadLeakBytes));
}

int main(void) { return SteadyLoadMain("glibc_target", GlibcTargetAllocate, GlibcTargetLeak); }
