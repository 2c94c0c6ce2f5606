#ifndef MEMPROF_CLI_REPORT_MODEL_STACK_HASH_H_
#define MEMPROF_CLI_REPORT_MODEL_STACK_HASH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memprof::report {

// FNV-1a over a stack's entries (return addresses, or the location ids a
// stack was interned to), for the indexes that merge identical stacks. Equal
// hashes do not make equal stacks: compare them in full on a match.
template <typename Stack>
uint64_t StackHash(const Stack& stack) {
  uint64_t hash = 14695981039346656037ULL;
  for (const auto entry : stack) hash = (hash ^ static_cast<uint64_t>(entry)) * 1099511628211ULL;
  return hash;
}

// StackHash as a hash function object, for a stack or a pointer to one (an
// index that points at the stacks it merges instead of copying them).
struct StackHasher {
  template <typename Entry>
  size_t operator()(const std::vector<Entry>& stack) const {
    return static_cast<size_t>(StackHash(stack));
  }
  template <typename Entry>
  size_t operator()(const std::vector<Entry>* stack) const {
    return static_cast<size_t>(StackHash(*stack));
  }
};

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_MODEL_STACK_HASH_H_
