// spike_target: a memory spike that is over before anyone looks, for peak
// capture (`activate --capture-growth`). Each "spike" line on stdin makes it
// allocate 300 MiB in SpikeHold300MiB (1 MiB blocks, so the growth is seen
// on its way up), hold it two seconds, free it, and then print "freed" on
// stdout. Linked with jemalloc (spike_target) or not (spike_glibc_target:
// glibc's malloc); the tests preload the agent. Ends at EOF on stdin or
// SIGTERM/SIGINT.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/testprogs/line_server.h"
#include "tests/testprogs/testprog_support.h"

enum {
  kSpikeBlocks = 300,
  kSpikeBlockBytes = 1 << 20,
  kHoldMillis = 2000,
  kStepMillis = 2,  // between blocks: the climb takes ~0.6 s, several polls
};

static void* spike[kSpikeBlocks];

// The blocks are not touched: the allocator counts them all the same, and
// the test machine is spared 300 MiB of resident memory.
__attribute__((noinline)) static int SpikeHold300MiB(void) {
  for (int i = 0; i < kSpikeBlocks; ++i) {
    spike[i] = malloc(kSpikeBlockBytes);
    if (spike[i] == NULL) return -1;
    TestProgSleepMillis(kStepMillis);
  }
  TestProgSleepMillis(kHoldMillis);
  for (int i = 0; i < kSpikeBlocks; ++i) {
    free(spike[i]);
    spike[i] = NULL;
  }
  return 0;
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  if (TestProgSignalReady("spike_target") != 0) return 1;
  char line[64];
  while (!TestProgStopRequested()) {
    int n = LineRead(STDIN_FILENO, line, sizeof(line));
    if (n == 0) break;  // EOF
    if (n < 0 && errno == EINTR) continue;  // a signal: look at the stop flag
    if (n < 0) return 1;
    if (line[0] == 's') {  // "spike"
      if (SpikeHold300MiB() != 0) {
        fprintf(stderr, "spike_target: out of memory\n");
        return 1;
      }
      if (LineWrite(STDOUT_FILENO, "freed\n") != 0) return 1;
    }
  }
  return 0;
}
