// oom_target: a process that grows until the OOM killer ends it, for
// near-limit capture (`activate --capture-near-limit`). On "grow" (stdin) it
// allocates 1 MiB blocks in GrowTowardsTheLimit, writing every page so that
// the memory cgroup is charged for them, one block every 50 ms (20 MiB/s:
// each 2% step of a 96 MiB limit takes about 100 ms, one poll of the
// agent), and never frees them. On "jump N" it allocates N MiB at once in
// JumpPastTheShare, every page written, and holds them. Linked with jemalloc; the tests preload the
// agent and move the process into a memory cgroup with a limit. Ends at EOF
// on stdin, SIGTERM/SIGINT, or (what the test waits for) SIGKILL from the
// kernel's OOM killer.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testprogs/line_server.h"
#include "tests/testprogs/testprog_support.h"

enum {
  kBlockBytes = 1 << 20,
  kStepMillis = 50,
  kMaxBlocks = 4096,  // 4 GiB: far past any limit a test sets
};

static void* volatile blocks[kMaxBlocks];

__attribute__((noinline)) static int GrowTowardsTheLimit(void) {
  for (int i = 0; i < kMaxBlocks && !TestProgStopRequested(); ++i) {
    char* block = malloc(kBlockBytes);
    if (block == NULL) return -1;
    memset(block, i & 0xff, kBlockBytes);
    blocks[i] = block;
    TestProgSleepMillis(kStepMillis);
  }
  return 0;
}

// One block of `mib` MiB, every page written: the usage jumps within one
// of the agent's polls.
__attribute__((noinline)) static int JumpPastTheShare(long mib) {
  char* block = malloc((size_t)mib * kBlockBytes);
  if (block == NULL) return -1;
  memset(block, 0x5a, (size_t)mib * kBlockBytes);
  blocks[kMaxBlocks - 1] = block;
  printf("jumped %ld MiB\n", mib);
  fflush(stdout);
  return 0;
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  if (TestProgSignalReady("oom_target") != 0) return 1;
  char line[64];
  while (!TestProgStopRequested()) {
    int n = LineRead(STDIN_FILENO, line, sizeof(line));
    if (n == 0) break;  // EOF
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 1;
    if (strncmp(line, "jump ", 5) == 0 && JumpPastTheShare(atol(line + 5)) != 0) {
      fprintf(stderr, "oom_target: malloc failed for the jump\n");
      return 1;
    }
    if (strcmp(line, "grow") == 0 && GrowTowardsTheLimit() != 0) {
      fprintf(stderr, "oom_target: malloc failed before the OOM killer came\n");
      return 1;
    }
  }
  return 0;
}
