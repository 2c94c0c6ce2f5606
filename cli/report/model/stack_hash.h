#ifndef MEMPROF_CLI_REPORT_MODEL_STACK_HASH_H_
#define MEMPROF_CLI_REPORT_MODEL_STACK_HASH_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace memprof::report {

// A hash of a stack's entries (return addresses, or the location ids a
// stack was interned to), for the indexes that merge identical stacks. Equal
// hashes do not make equal stacks: compare them in full on a match. FNV-1a's
// step in four lanes, every fourth entry each, then the lanes mixed: one
// lane's multiplies wait for each other, four run side by side (a big
// dump's stacks have 50 entries and are hashed once or twice each).
template <typename Stack>
uint64_t StackHash(const Stack& stack) {
  constexpr uint64_t kPrime = 1099511628211ULL;
  uint64_t lanes[4] = {14695981039346656037ULL, 0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL,
                       0x165667b19e3779f9ULL};
  const size_t size = std::size(stack);
  const auto* entries = std::data(stack);
  size_t i = 0;
  for (; i + 4 <= size; i += 4) {
    for (size_t lane = 0; lane < 4; ++lane) {
      lanes[lane] = (lanes[lane] ^ static_cast<uint64_t>(entries[i + lane])) * kPrime;
    }
  }
  for (; i < size; ++i) lanes[0] = (lanes[0] ^ static_cast<uint64_t>(entries[i])) * kPrime;
  uint64_t hash = size;
  for (uint64_t lane : lanes) hash = (hash ^ lane) * kPrime;
  return hash ^ (hash >> 29);
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
