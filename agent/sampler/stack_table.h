#ifndef MEMPROF_AGENT_SAMPLER_STACK_TABLE_H_
#define MEMPROF_AGENT_SAMPLER_STACK_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "agent/sampler/mapped_region.h"

namespace memprof::agent {

// The distinct stacks of the samples, each stored once and named by its
// slot number, in a fixed array mapped once (open addressing on a hash of
// the frames). Many samples share few stacks, so the live table holds a
// 4-byte id instead of 512 bytes of frames.
//
// Thread-safety: none; the sampler calls it under its sample lock (taken
// only on sampled allocations and by dumps).
class StackTable {
 public:
  static constexpr int kMaxFrames = 64;
  static constexpr uint32_t kNoStack = UINT32_MAX;

  struct Stack {
    uint64_t hash;  // 0: empty slot
    uint32_t depth;
    uintptr_t frames[kMaxFrames];
  };

  // Maps `capacity` stacks (a power of two at least); false if mmap fails.
  bool Init(size_t capacity);
  bool ready() const { return stacks_ != nullptr; }
  size_t capacity() const { return mask_ + 1; }

  // The id of this stack (leaf first, at most kMaxFrames), adding it if new;
  // kNoStack (counted) when the table is full.
  uint32_t Intern(const uintptr_t* frames, int depth);
  // The stack `id`, or nullptr for an id not in use.
  const Stack* Find(uint32_t id) const;
  void Clear();

  uint64_t size() const { return size_; }
  uint64_t overflows() const { return overflows_; }

 private:
  MappedRegion region_;
  Stack* stacks_ = nullptr;
  size_t mask_ = 0;
  uint64_t size_ = 0;
  uint64_t overflows_ = 0;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SAMPLER_STACK_TABLE_H_
