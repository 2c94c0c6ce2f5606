// allocation_mix_target: the three kinds of allocation an allocation profile
// must tell apart.
//   - cache_fill: 64 MiB allocated before the program says it is ready, and
//     kept: live during any window, but none of it allocated in one;
//   - churn_buffer: 256 KiB a millisecond in 64 KiB buffers, each freed
//     right after it is written: the most bytes allocated, none kept, each
//     alive for microseconds;
//   - leak_record: 64 KiB every 10 ms, never freed: a slow leak, all of
//     what it allocates survives.
// Linked with jemalloc; the tests preload the agent and start it with
// MALLOC_CONF=prof:true. Runs until SIGTERM/SIGINT.
#include <stdlib.h>
#include <string.h>

#include "tests/testprogs/testprog_support.h"

enum {
  kCacheBlocks = 1024,
  kBlockBytes = 64 * 1024,
  kChurnPerTick = 4,
  kLeakEveryTicks = 10,
  kMaxLeaks = 1 << 16,
};

static void* cache[kCacheBlocks];
static void* leaks[kMaxLeaks];
static size_t leak_count;
static volatile unsigned char sink;

// Makes `p` and what it points to observable, so that the compiler keeps
// every malloc, memset and free (GCC removes a malloc/free pair otherwise).
static inline void Escape(void* p) { __asm__ volatile("" : : "r"(p) : "memory"); }

__attribute__((noinline)) static void cache_fill(void) {
  for (int i = 0; i < kCacheBlocks; ++i) {
    cache[i] = malloc(kBlockBytes);
    memset(cache[i], i & 0xff, kBlockBytes);
    Escape(cache[i]);
  }
}

__attribute__((noinline)) static void churn_buffer(void) {
  unsigned char* buffer = malloc(kBlockBytes);
  memset(buffer, 0x5a, kBlockBytes);
  Escape(buffer);
  sink = buffer[kBlockBytes / 2];
  free(buffer);
}

__attribute__((noinline)) static void leak_record(void) {
  if (leak_count == kMaxLeaks) return;
  leaks[leak_count] = malloc(kBlockBytes);
  memset(leaks[leak_count], 0x11, kBlockBytes);
  Escape(leaks[leak_count]);
  ++leak_count;
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  cache_fill();
  if (TestProgSignalReady("allocation_mix_target") != 0) return 1;
  for (unsigned tick = 0; !TestProgStopRequested(); ++tick) {
    for (int i = 0; i < kChurnPerTick; ++i) churn_buffer();
    if (tick % kLeakEveryTicks == 0) leak_record();
    TestProgSleepMillis(1);
  }
  sink = ((unsigned char*)cache[0])[0];
  return 0;
}
