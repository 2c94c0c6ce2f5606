// exec_helper: a helper program that a service (exec_host) runs. Linked with
// jemalloc only, like the service, so an agent that follows it into the
// helper has an allocator to work with.
//
//   exec_helper alloc             allocate, print "helper alloc", return from main
//   exec_helper _exit             allocate, print "helper _exit", _exit(0)
//   exec_helper exec PROG ARGS... print "helper exec", exec PROG in place
//   exec_helper serve             allocate, print "helper serve", run until SIGTERM
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testprogs/testprog_support.h"

enum { kBlocks = 64, kBlockBytes = 16 * 1024, kTickMillis = 20 };

static void* g_blocks[kBlocks];

__attribute__((noinline)) static int HelperAllocate(void) {
  for (int i = 0; i < kBlocks; ++i) {
    free(g_blocks[i]);
    g_blocks[i] = malloc(kBlockBytes);
    if (g_blocks[i] == NULL) return -1;
    memset(g_blocks[i], 0x42, kBlockBytes);
  }
  return 0;
}

static void Say(const char* mode) {
  printf("helper %s\n", mode);
  fflush(stdout);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "exec") == 0 && argc > 2) {
    Say(mode);
    execv(argv[2], argv + 2);
    perror("exec_helper: exec");
    return 127;
  }
  if (strcmp(mode, "alloc") != 0 && strcmp(mode, "_exit") != 0 && strcmp(mode, "serve") != 0) {
    fprintf(stderr, "usage: exec_helper alloc|_exit|serve|exec PROG ARGS...\n");
    return 2;
  }
  if (TestProgInstallStopHandlers() != 0 || HelperAllocate() != 0) return 1;
  Say(mode);
  if (strcmp(mode, "_exit") == 0) _exit(0);
  while (strcmp(mode, "serve") == 0 && !TestProgStopRequested()) {
    if (HelperAllocate() != 0) return 1;
    TestProgSleepMillis(kTickMillis);
  }
  for (int i = 0; i < kBlocks; ++i) free(g_blocks[i]);
  return 0;
}
