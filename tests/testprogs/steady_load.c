#include "tests/testprogs/steady_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testprogs/testprog_support.h"

enum {
  kRingSlots = 64,  // 4 MiB retained at any time.
  kBlocksPerTick = 4,
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

int SteadyLoadKeepBlock(char* block) {
  if (block == NULL) return -1;
  memset(block, 0x5a, kSteadyLoadBlockBytes);
  free(g_ring[g_ring_next]);
  g_ring[g_ring_next] = block;
  g_ring_next = (g_ring_next + 1) % kRingSlots;
  return 0;
}

void SteadyLoadBeforeLeak(void) {
  if (g_leaked_bytes < kLeakCapBytes) return;
  while (g_leaked != NULL) {
    struct LeakNode* next = g_leaked->next;
    free(g_leaked);
    g_leaked = next;
  }
  g_leaked_bytes = 0;
}

int SteadyLoadKeepLeak(void* block) {
  struct LeakNode* node = block;
  if (node == NULL) return -1;
  memset(node, 0xa5, kSteadyLoadLeakBytes);
  node->next = g_leaked;
  g_leaked = node;
  g_leaked_bytes += kSteadyLoadLeakBytes;
  return 0;
}

static int Tick(int (*allocate)(void), int (*leak)(void)) {
  for (int i = 0; i < kBlocksPerTick; ++i) {
    if (allocate() != 0) return -1;
  }
  return leak();
}

int SteadyLoadMain(const char* program_name, int (*allocate)(void), int (*leak)(void)) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  for (int i = 0; i < kRingSlots; ++i) {
    if (allocate() != 0) return 1;
  }
  if (leak() != 0 || TestProgSignalReady(program_name) != 0) return 1;
  while (!TestProgStopRequested()) {
    if (Tick(allocate, leak) != 0) {
      fprintf(stderr, "%s: out of memory\n", program_name);
      return 1;
    }
    TestProgSleepMillis(kTickMillis);
  }
  return 0;
}
