// purge_target: holds and frees a known amount of memory on command, for the
// doctor and purge tests. Built twice: linked with jemalloc (the tests preload
// the agent and set MALLOC_CONF with decay disabled, so freed pages stay
// dirty) and with glibc malloc only (purge_target_glibc).
//
// Commands, one per line on stdin; each is answered on stdout once done:
//   hold N  -> allocates N MiB in 64 KiB blocks (PurgeTargetHold), touches
//              every page, answers "held N"
//   free    -> frees every held block but the last (PurgeTargetFree),
//              answers "freed N" with the MiB freed. Keeping the last block
//              keeps glibc from trimming the freed space off the heap's top
//              by itself, so the freed memory stays resident until a purge.
// Ends on EOF, SIGTERM or SIGINT.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testprogs/testprog_support.h"

enum { kBlockBytes = 64 * 1024, kBlocksPerMiB = 16, kMaxMiB = 4096 };

static void* held[kMaxMiB * kBlocksPerMiB];
static size_t held_count;

// The allocations doctor should account for: N MiB, every page touched.
__attribute__((noinline)) static int PurgeTargetHold(long mib) {
  if (mib <= 0 || mib > kMaxMiB || held_count + (size_t)mib * kBlocksPerMiB > kMaxMiB * kBlocksPerMiB) {
    return -1;
  }
  for (long i = 0; i < mib * kBlocksPerMiB; ++i) {
    void* block = malloc(kBlockBytes);
    if (block == NULL) return -1;
    memset(block, 0x5a, kBlockBytes);
    held[held_count++] = block;
  }
  return 0;
}

// Frees all held blocks but the last; returns the MiB freed.
__attribute__((noinline)) static long PurgeTargetFree(void) {
  if (held_count < 2) return 0;
  const size_t freed = held_count - 1;
  for (size_t i = 0; i < freed; ++i) free(held[i]);
  held[0] = held[held_count - 1];
  held_count = 1;
  return (long)(freed / kBlocksPerMiB);
}

static int Answer(const char* line) {
  if (strncmp(line, "hold ", 5) == 0) {
    const long mib = strtol(line + 5, NULL, 10);
    if (PurgeTargetHold(mib) != 0) return printf("error hold %ld\n", mib) < 0 ? -1 : 0;
    return printf("held %ld\n", mib) < 0 ? -1 : 0;
  }
  if (strcmp(line, "free\n") == 0) return printf("freed %ld\n", PurgeTargetFree()) < 0 ? -1 : 0;
  return printf("unknown command\n") < 0 ? -1 : 0;
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (TestProgSignalReady("purge_target") != 0) return 1;
  char line[128];
  while (!TestProgStopRequested() && fgets(line, sizeof(line), stdin) != NULL) {
    if (Answer(line) != 0) return 1;
  }
  return 0;
}
