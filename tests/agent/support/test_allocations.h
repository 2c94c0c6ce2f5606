#ifndef MEMPROF_TESTS_AGENT_SUPPORT_TEST_ALLOCATIONS_H_
#define MEMPROF_TESTS_AGENT_SUPPORT_TEST_ALLOCATIONS_H_

#include <cstdlib>
#include <cstring>
#include <vector>

namespace memprof::agent {

// Allocates through a named, non-inlined function and keeps the memory, so a
// heap profile taken afterwards has samples to show.
[[gnu::noinline]] inline std::vector<void*> AllocateForProfile(size_t count, size_t size) {
  std::vector<void*> blocks;
  for (size_t i = 0; i < count; ++i) {
    void* p = std::malloc(size);
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
  void* p = std::malloc(kBeyondAnyCountdown);
  asm volatile("" : : "r"(p) : "memory");
  std::free(p);
}

inline void FreeAll(std::vector<void*>& blocks) {
  for (void* p : blocks) std::free(p);
  blocks.clear();
}

}  // namespace memprof::agent

#endif  // MEMPROF_TESTS_AGENT_SUPPORT_TEST_ALLOCATIONS_H_
