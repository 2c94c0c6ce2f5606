// trend_target: the two shapes `memprofctl report --trend` must tell apart.
// At start it fills a big cache once (TrendTargetFillCache, 64 MiB that then
// never changes: the top row of every single dump); afterwards it leaks a
// little, steadily (TrendTargetLeakSlowly, 64 KiB every 50 ms, never freed),
// until SIGTERM/SIGINT. Linked with jemalloc; the tests preload the agent.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testprogs/testprog_support.h"

enum {
  kCacheBlocks = 64,
  kCacheBlockBytes = 1 << 20,
  kLeakBytes = 64 << 10,
  kLeakEveryMillis = 50,
};

static void* cache[kCacheBlocks];

// Touched so the memory is really there, as a cache's would be.
__attribute__((noinline)) static int TrendTargetFillCache(void) {
  for (int i = 0; i < kCacheBlocks; ++i) {
    cache[i] = malloc(kCacheBlockBytes);
    if (cache[i] == NULL) return -1;
    memset(cache[i], 0xab, kCacheBlockBytes);
  }
  return 0;
}

// Never freed; the volatile store keeps the compiler from dropping it.
__attribute__((noinline)) static int TrendTargetLeakSlowly(void) {
  char* volatile block = malloc(kLeakBytes);
  if (block == NULL) return -1;
  block[0] = 1;
  return 0;
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  if (TrendTargetFillCache() != 0) {
    fprintf(stderr, "trend_target: out of memory\n");
    return 1;
  }
  if (TestProgSignalReady("trend_target") != 0) return 1;
  while (!TestProgStopRequested()) {
    if (TrendTargetLeakSlowly() != 0) return 1;
    TestProgSleepMillis(kLeakEveryMillis);
  }
  return 0;
}
