#ifndef MEMPROF_TESTS_AGENT_SUPPORT_TEST_ALLOCATIONS_H_
#define MEMPROF_TESTS_AGENT_SUPPORT_TEST_ALLOCATIONS_H_

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace memprof::agent {

// Under AddressSanitizer or ThreadSanitizer (the sanitizer stages of
// `bash dev.sh test`) malloc is the sanitizer's, and jemalloc never sees it.
// jemalloc's own mallocx and dallocx, which no sanitizer intercepts, still
// allocate from jemalloc: the tests' blocks go through them there, so the
// profiles and statistics the tests read still show them (docs/reliability.md).
// MEMPROF_THREAD_SANITIZER: files that see protobuf's headers are compiled
// without __SANITIZE_THREAD__ (proto/CMakeLists.txt).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || \
    defined(MEMPROF_THREAD_SANITIZER)
inline constexpr bool kHeapIsTheSanitizers = true;
#else
inline constexpr bool kHeapIsTheSanitizers = false;
#endif

struct JemallocApi {
  void* (*mallocx)(size_t, int) = nullptr;
  void (*dallocx)(void*, int) = nullptr;
};

// jemalloc's mallocx/dallocx when a sanitizer owns malloc and jemalloc is
// linked; otherwise none (use malloc and free).
inline const JemallocApi& SanitizedJemalloc() {
  static const JemallocApi api = [] {
    JemallocApi found;
    if (!kHeapIsTheSanitizers) return found;
    found.mallocx = reinterpret_cast<void* (*)(size_t, int)>(dlsym(RTLD_DEFAULT, "mallocx"));
    found.dallocx = reinterpret_cast<void (*)(void*, int)>(dlsym(RTLD_DEFAULT, "dallocx"));
    if (found.mallocx == nullptr || found.dallocx == nullptr) found = {};
    return found;
  }();
  return api;
}

inline void* HeapAllocate(size_t size) {
  const JemallocApi& jemalloc = SanitizedJemalloc();
  return jemalloc.mallocx != nullptr ? jemalloc.mallocx(size, 0) : std::malloc(size);
}

inline void HeapFree(void* p) {
  const JemallocApi& jemalloc = SanitizedJemalloc();
  if (jemalloc.dallocx != nullptr) {
    if (p != nullptr) jemalloc.dallocx(p, 0);
  } else {
    std::free(p);
  }
}

// Allocates through a named, non-inlined function and keeps the memory, so a
// heap profile taken afterwards has samples to show.
[[gnu::noinline]] inline std::vector<void*> AllocateForProfile(size_t count, size_t size) {
  std::vector<void*> blocks;
  for (size_t i = 0; i < count; ++i) {
    void* p = HeapAllocate(size);
    std::memset(p, 0x5a, size);
    blocks.push_back(p);
  }
  return blocks;
}

// jemalloc draws each thread's distance to its next sample from the sample
// interval in force when it last sampled: after a test with a 1 MiB interval
// this thread may still have megabytes to go before its first sample at
// 1 KiB. One big allocation (freed at once, so it is never live) uses that
// distance up, and the next one is drawn from the current interval.
// (The pointer escapes through an asm statement: the compiler may otherwise
// drop a malloc whose block is only freed.)
inline void UseUpSampleCountdown() {
  constexpr size_t kBeyondAnyCountdown = size_t{64} << 20;  // P(distance > 64 MiB at 1 MiB) ~ e^-64
  void* p = HeapAllocate(kBeyondAnyCountdown);
  asm volatile("" : : "r"(p) : "memory");
  HeapFree(p);
}

inline void FreeAll(std::vector<void*>& blocks) {
  for (void* p : blocks) HeapFree(p);
  blocks.clear();
}

}  // namespace memprof::agent

#endif  // MEMPROF_TESTS_AGENT_SUPPORT_TEST_ALLOCATIONS_H_
