#include "agent/sampler/stack_table.h"

#include <cstring>

namespace memprof::agent {
namespace {

uint64_t HashFrames(const uintptr_t* frames, int depth) {
  uint64_t h = 0xCBF29CE484222325ULL ^ static_cast<uint64_t>(depth);
  for (int i = 0; i < depth; ++i) {
    h ^= frames[i];
    h *= 0x100000001B3ULL;
    h ^= h >> 29;
  }
  return h | 1;  // never 0, the empty slot's mark
}

}  // namespace

bool StackTable::Init(size_t capacity) {
  size_t rounded = 64;
  while (rounded < capacity) rounded <<= 1;
  MappedRegion region = MappedRegion::Map(rounded * sizeof(Stack));
  if (region.empty()) return false;
  region_ = static_cast<MappedRegion&&>(region);
  stacks_ = static_cast<Stack*>(region_.data());
  mask_ = rounded - 1;
  return true;
}

uint32_t StackTable::Intern(const uintptr_t* frames, int depth) {
  if (stacks_ == nullptr || depth <= 0) return kNoStack;
  if (depth > kMaxFrames) depth = kMaxFrames;
  const uint64_t hash = HashFrames(frames, depth);
  const size_t bytes = static_cast<size_t>(depth) * sizeof(uintptr_t);
  // Keep a quarter free so that probes stay short.
  const bool full = size_ >= capacity() - capacity() / 4;
  for (size_t probe = 0; probe <= mask_; ++probe) {
    const size_t i = (hash + probe) & mask_;
    Stack& s = stacks_[i];
    if (s.hash == 0) {
      if (full) break;
      s.depth = static_cast<uint32_t>(depth);
      std::memcpy(s.frames, frames, bytes);
      s.hash = hash;
      ++size_;
      return static_cast<uint32_t>(i);
    }
    if (s.hash == hash && s.depth == static_cast<uint32_t>(depth) &&
        std::memcmp(s.frames, frames, bytes) == 0) {
      return static_cast<uint32_t>(i);
    }
  }
  ++overflows_;
  return kNoStack;
}

const StackTable::Stack* StackTable::Find(uint32_t id) const {
  if (stacks_ == nullptr || id > mask_ || stacks_[id].hash == 0) return nullptr;
  return &stacks_[id];
}

void StackTable::Clear() {
  region_.Zero();
  size_ = 0;
  overflows_ = 0;
}

}  // namespace memprof::agent
