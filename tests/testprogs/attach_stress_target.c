// attach_stress_target: what `memprofctl attach` must not disturb. Four
// threads allocate, fill, check and free blocks as fast as they can (a block
// whose bytes changed aborts the process), and a fifth dlopen()s and
// dlclose()s argv[1] in a loop, so that an attach lands while threads are
// inside malloc, free and the loader. Linked with jemalloc. On SIGTERM each
// thread stops, and the process exits 0 only if every check held and every
// thread went round at least once. With --busy-main the main thread hammers
// too, so that no thread is asleep when attach chooses one. With
// --every-call the hammers use malloc, calloc, realloc and memalign in turn,
// and a sixth thread forks again and again, each child allocating through
// what it inherited and exiting 0 (anything else aborts the parent): what
// memprof's own sampler must survive while it is switched on and off.

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testprogs/testprog_support.h"

enum { kHammerThreads = 4, kRing = 64, kMaxBlock = 8192 };

struct Hammer {
  pthread_t thread;
  unsigned char tag;
  unsigned long rounds;
};

static const char* library_path;
static unsigned long loader_rounds;
static int every_call;
static unsigned long fork_rounds;

static void CheckBlock(const unsigned char* block, size_t size, unsigned char tag) {
  for (size_t i = 0; i < size; ++i) {
    if (block[i] != tag) {
      fprintf(stderr, "attach_stress_target: block corrupted (tag %u)\n", tag);
      abort();
    }
  }
}

// With --every-call: replaces `old` (checked by the caller; may be NULL) by
// a block of `size` through one of the malloc family, chosen by `seed`.
static void* AllocateSomeWay(void* old, size_t size, uint32_t seed) {
  switch ((seed >> 4) % 4) {
    case 0:
      free(old);
      return malloc(size);
    case 1:
      free(old);
      return calloc(1, size);
    case 2:
      return realloc(old, size);
    default:
      free(old);
      return memalign(64, size);
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
        if (!every_call) free(blocks[i]);
      }
      seed = seed * 1103515245u + 12345u;
      sizes[i] = 16 + (seed >> 8) % kMaxBlock;
      blocks[i] = every_call ? AllocateSomeWay(blocks[i], sizes[i], seed) : malloc(sizes[i]);
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

// A child allocates through the malloc family it inherited and exits 0.
static void ForkedChild(void) {
  for (int i = 0; i < 32; ++i) {
    unsigned char* p = malloc(512 + (size_t)i * 256);
    if (p == NULL) _exit(2);
    memset(p, i, 512);
    unsigned char* q = realloc(p, 8192);
    if (q == NULL || q[511] != (unsigned char)i) _exit(3);
    free(q);
  }
  _exit(0);
}

__attribute__((noinline)) static void* AttachStressForker(void* arg) {
  (void)arg;
  while (!TestProgStopRequested()) {
    const pid_t pid = fork();
    if (pid < 0) abort();
    if (pid == 0) ForkedChild();
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "attach_stress_target: a forked child failed (status %d)\n", status);
      abort();
    }
    __atomic_add_fetch(&fork_rounds, 1, __ATOMIC_RELAXED);
    TestProgSleepMillis(5);
  }
  return NULL;
}

// argv: LIBRARY [--busy-main] [--every-call]; 0 when understood.
static int ParseArguments(int argc, char** argv, int* busy_main) {
  if (argc < 2) return -1;
  library_path = argv[1];
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--busy-main") == 0) {
      *busy_main = 1;
    } else if (strcmp(argv[i], "--every-call") == 0) {
      every_call = 1;
    } else {
      return -1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  int busy_main = 0;
  if (ParseArguments(argc, argv, &busy_main) != 0) {
    fprintf(stderr, "usage: attach_stress_target LIBRARY [--busy-main] [--every-call]\n");
    return 2;
  }
  if (TestProgInstallStopHandlers() != 0) return 1;
  struct Hammer hammers[kHammerThreads];
  pthread_t loader;
  for (int i = 0; i < kHammerThreads; ++i) {
    hammers[i].tag = (unsigned char)(0x11 * (i + 1));
    hammers[i].rounds = 0;
    if (pthread_create(&hammers[i].thread, NULL, AttachStressHammer, &hammers[i]) != 0) return 1;
  }
  if (pthread_create(&loader, NULL, AttachStressLoader, NULL) != 0) return 1;
  pthread_t forker;
  if (every_call && pthread_create(&forker, NULL, AttachStressForker, NULL) != 0) return 1;
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
  if (every_call) {
    pthread_join(forker, NULL);
    ok = ok && fork_rounds > 0;
  }
  return ok ? 0 : 3;
}
