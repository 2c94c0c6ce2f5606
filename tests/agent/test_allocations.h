#ifndef MEMPROF_TESTS_AGENT_TEST_ALLOCATIONS_H_
#define MEMPROF_TESTS_AGENT_TEST_ALLOCATIONS_H_

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

inline void FreeAll(std::vector<void*>& blocks) {
  for (void* p : blocks) std::free(p);
  blocks.clear();
}

}  // namespace memprof::agent

#endif  // MEMPROF_TESTS_AGENT_TEST_ALLOCATIONS_H_
