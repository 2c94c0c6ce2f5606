// growth_target: a heap that grows by exactly 16 MiB between any two
// readings of jemalloc's statistics, however the machine is loaded: the
// doctor test's steadily growing heap, without a clock.
//
// Every reading of jemalloc's statistics starts by writing its "epoch" (the
// agent's Stats does, through mallctl). This program defines mallctl itself
// (exported, so the agent's dlsym(RTLD_DEFAULT, "mallctl") finds it first;
// and malloc too, a plain mallocx, since the agent takes mallctl for
// jemalloc's only when malloc comes from the same object):
// before an epoch write reaches jemalloc, it asks the main thread to leak
// 16 MiB more, waits until it has (two semaphores), and only then
// passes the call on. So the heap a reading sees is 16 MiB
// larger than the one the reading before saw. Every other call goes straight
// to jemalloc, and so do jemalloc's own calls of mallctl (malloc_stats_print
// writes an epoch too).
//
// Linked with jemalloc; the tests preload the agent. Runs until SIGTERM/SIGINT.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testprogs/testprog_support.h"

// jemalloc's own entry point (jemalloc/jemalloc.h is not needed for one).
void* mallocx(size_t size, int flags);

enum {
  kGrowthBlocks = 16,
  kGrowthBlockBytes = 1 << 20,  // large: counted in stats.allocated at once, no thread cache
};

typedef int (*MallctlFn)(const char*, void*, size_t*, void*, size_t);

// mallctl -> main thread, and back. Semaphores, not pipes: the agent's
// threads have a descriptor table of their own (the host may close every
// descriptor), so they cannot use pipes the program opens.
static sem_t grow_request;
static sem_t grow_done;
static int grow_ready;  // set once both exist

static void* real_mallctl;  // jemalloc's, as dlsym found it

static MallctlFn RealMallctl(void) {
  if (real_mallctl == NULL) real_mallctl = dlsym(RTLD_NEXT, "mallctl");
  MallctlFn real;
  memcpy(&real, &real_mallctl, sizeof(real));  // ISO C has no cast between the two
  return real;
}

// Whether `caller` is code of the library that defines the real mallctl.
static int CalledFromJemalloc(const void* caller) {
  Dl_info from;
  Dl_info real;
  return real_mallctl != NULL && dladdr(caller, &from) != 0 && dladdr(real_mallctl, &real) != 0 &&
         from.dli_fbase == real.dli_fbase;
}

// Waits for `sem`; 0 after a stop signal (sem_wait has no SA_RESTART).
static int Wait(sem_t* sem) {
  while (sem_wait(sem) != 0) {
    if (errno != EINTR || TestProgStopRequested()) return 0;
  }
  return 1;
}

// Asks the main thread to grow the heap and waits until it has.
static void GrowBeforeReading(void) {
  if (!__atomic_load_n(&grow_ready, __ATOMIC_ACQUIRE)) return;
  sem_post(&grow_request);
  (void)Wait(&grow_done);
}

__attribute__((visibility("default"))) int mallctl(const char* name, void* oldp, size_t* oldlenp,
                                                   void* newp, size_t newlen) {
  MallctlFn real = RealMallctl();
  if (real == NULL) return ENOENT;
  if (newp != NULL && strcmp(name, "epoch") == 0 &&
      !CalledFromJemalloc(__builtin_return_address(0))) {
    GrowBeforeReading();
  }
  return real(name, oldp, oldlenp, newp, newlen);
}

// jemalloc's malloc under this program's name (see above).
__attribute__((visibility("default"))) void* malloc(size_t size) {
  return mallocx(size == 0 ? 1 : size, 0);
}

// Never freed; touched so the memory is really there.
__attribute__((noinline)) static int GrowthTargetLeak(void) {
  for (int i = 0; i < kGrowthBlocks; ++i) {
    char* block = malloc(kGrowthBlockBytes);
    if (block == NULL) return -1;
    memset(block, 0xcd, kGrowthBlockBytes);
  }
  return 0;
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0) return 1;
  if (sem_init(&grow_request, 0, 0) != 0 || sem_init(&grow_done, 0, 0) != 0) {
    perror("growth_target: sem_init");
    return 1;
  }
  __atomic_store_n(&grow_ready, 1, __ATOMIC_RELEASE);
  if (TestProgSignalReady("growth_target") != 0) return 1;
  while (Wait(&grow_request)) {
    if (GrowthTargetLeak() != 0) return 1;
    sem_post(&grow_done);
  }
  return 0;
}
