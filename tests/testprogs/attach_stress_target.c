// attach_stress_target: what `memprofctl attach` must not disturb. Four
// threads allocate, fill, check and free blocks as fast as they can (a block
// whose bytes changed aborts the process), and a fifth dlopen()s and
// dlclose()s argv[1] in a loop, so that an attach lands while threads are
// inside malloc, free and the loader. Linked with jemalloc. On SIGTERM each
// thread stops, and the process exits 0 only if every check held and every
// thread went round at least once. With --busy-main as argv[2] the main
// thread hammers too, so that no thread is asleep when attach chooses one.

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testprogs/testprog_support.h"

enum { kHammerThreads = 4, kRing = 64, kMaxBlock = 8192 };

struct Hammer {
  pthread_t thread;
  unsigned char tag;
  unsigned long rounds;
};

static const char* library_path;
static unsigned long loader_rounds;

static void CheckBlock(const unsigned char* block, size_t size, unsigned char tag) {
  for (size_t i = 0; i < size; ++i) {
    if (block[i] != tag) {
      fprintf(stderr, "attach_stress_target: block corrupted (tag %u)\n", tag);
      abort();
    }
  }
}

__attribute__((noinline)) static void* AttachStressHammer(void* arg) {
  struct Hammer* h = arg;
  unsigned char* blocks[kRing] = {0};
  size_t sizes[kRing] = {0};
  uint32_t seed = h->tag * 2654435761u;
  while (!TestProgStopRequested()) {
    for (int i = 0; i < kRing; ++i) {
      if (blocks[i] != NULL) {
        CheckBlock(blocks[i], sizes[i], h->tag);
        free(blocks[i]);
      }
      seed = seed * 1103515245u + 12345u;
      sizes[i] = 16 + (seed >> 8) % kMaxBlock;
      blocks[i] = malloc(sizes[i]);
      if (blocks[i] == NULL) abort();
      memset(blocks[i], h->tag, sizes[i]);
    }
    __atomic_add_fetch(&h->rounds, 1, __ATOMIC_RELAXED);
  }
  for (int i = 0; i < kRing; ++i) {
    if (blocks[i] != NULL) CheckBlock(blocks[i], sizes[i], h->tag);
    free(blocks[i]);
  }
  return NULL;
}

__attribute__((noinline)) static void* AttachStressLoader(void* arg) {
  (void)arg;
  while (!TestProgStopRequested()) {
    void* handle = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "attach_stress_target: %s\n", dlerror());
      abort();
    }
    if (dlsym(handle, "ServiceCacheAllocate") == NULL) abort();
    dlclose(handle);
    __atomic_add_fetch(&loader_rounds, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--busy-main") != 0)) {
    fprintf(stderr, "usage: attach_stress_target LIBRARY [--busy-main]\n");
    return 2;
  }
  const int busy_main = argc == 3;
  library_path = argv[1];
  if (TestProgInstallStopHandlers() != 0) return 1;
  struct Hammer hammers[kHammerThreads];
  pthread_t loader;
  for (int i = 0; i < kHammerThreads; ++i) {
    hammers[i].tag = (unsigned char)(0x11 * (i + 1));
    hammers[i].rounds = 0;
    if (pthread_create(&hammers[i].thread, NULL, AttachStressHammer, &hammers[i]) != 0) return 1;
  }
  if (pthread_create(&loader, NULL, AttachStressLoader, NULL) != 0) return 1;
  if (TestProgSignalReady("attach_stress_target") != 0) return 1;
  struct Hammer main_hammer = {pthread_self(), 0x55, 0};
  if (busy_main) {
    AttachStressHammer(&main_hammer);
  } else {
    while (!TestProgStopRequested()) TestProgSleepMillis(10);
  }
  int ok = !busy_main || main_hammer.rounds > 0;
  for (int i = 0; i < kHammerThreads; ++i) {
    pthread_join(hammers[i].thread, NULL);
    ok = ok && hammers[i].rounds > 0;
  }
  pthread_join(loader, NULL);
  ok = ok && loader_rounds > 0;
  return ok ? 0 : 3;
}
