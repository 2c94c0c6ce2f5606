// plain_target: a C program linked with jemalloc only. The integration tests
// start it with libmemprof_agent.so in LD_PRELOAD (or under `memprofctl run`).
// It retains 64 KiB blocks in a bounded ring (PlainTargetAllocate) and leaks
// 4 KiB every tick (PlainTargetLeak), until SIGTERM/SIGINT.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testprogs/testprog_support.h"

enum {
  kBlockBytes = 64 * 1024,
  kRingSlots = 64,  // 4 MiB retained at any time.
  kBlocksPerTick = 4,
  kLeakBytes = 4 * 1024,
  kLeakCapBytes = 64 * 1024 * 1024,
  kTickMillis = 10,
};

struct LeakNode {
  struct LeakNode* next;
};

static void* g_ring[kRingSlots];
static size_t g_ring_next = 0;
static struct LeakNode* g_leaked = NULL;
static size_t g_leaked_bytes = 0;

// Replaces the oldest ring slot with a fresh, touched block.
__attribute__((noinline)) static int PlainTargetAllocate(void) {
  char* block = malloc(kBlockBytes);
  if (block == NULL) return -1;
  memset(block, 0x5a, kBlockBytes);
  free(g_ring[g_ring_next]);
  g_ring[g_ring_next] = block;
  g_ring_next = (g_ring_next + 1) % kRingSlots;
  return 0;
}

// Lets go of everything "leaked" so far; see PlainTargetLeak.
static void ReleaseLeaked(void) {
  while (g_leaked != NULL) {
    struct LeakNode* next = g_leaked->next;
    free(g_leaked);
    g_leaked = next;
  }
  g_leaked_bytes = 0;
}

// Never frees: the steadily growing "leak" the tests can look for. So that a
// forgotten process cannot eat the machine, the leak starts over at 64 MiB
// (about 160 s) instead of stopping, and this function never stops allocating.
__attribute__((noinline)) static int PlainTargetLeak(void) {
  if (g_leaked_bytes >= kLeakCapBytes) ReleaseLeaked();
  struct LeakNode* node = malloc(kLeakBytes);
  if (node == NULL) return -1;
  memset(node, 0xa5, kLeakBytes);
  node->next = g_leaked;
  g_leaked = node;
  g_leaked_bytes += kLeakBytes;
  return 0;
}

static int Tick(void) {
  for (int i = 0; i < kBlocksPerTick; ++i) {
    if (PlainTargetAllocate() != 0) return -1;
  }
  return PlainTargetLeak();
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  for (int i = 0; i < kRingSlots; ++i) {
    if (PlainTargetAllocate() != 0) return 1;
  }
  if (PlainTargetLeak() != 0 || TestProgSignalReady("plain_target") != 0) return 1;
  while (!TestProgStopRequested()) {
    if (Tick() != 0) {
      fprintf(stderr, "plain_target: out of memory\n");
      return 1;
    }
    TestProgSleepMillis(kTickMillis);
  }
  return 0;
}
