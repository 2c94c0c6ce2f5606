#include "cli/report/merge/address_space.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <utility>

namespace memprof::report::merge {
namespace {

// Moves are multiples of this, so whatever alignment the loader gave a
// module (page, or 2 MiB for huge-page text) is kept.
constexpr uint64_t kMoveAlignment = uint64_t{2} << 20;

std::string MapsLine(const symbolize::MemoryMapping& m, uint64_t delta) {
  char range[80];
  std::snprintf(range, sizeof(range), "%" PRIx64 "-%" PRIx64 " ", m.start + delta, m.end + delta);
  char fields[64];
  std::snprintf(fields, sizeof(fields), " %08" PRIx64 " 00:00 %" PRIu64 " ", m.offset, m.inode);
  return range + m.perms + fields + m.path + (m.deleted ? " (deleted)" : "");
}

}  // namespace

std::vector<AddressSpace::Instance> AddressSpace::Instances(
    const std::vector<symbolize::MemoryMapping>& mappings) {
  std::vector<Instance> instances;
  const symbolize::MemoryMapping* previous = nullptr;
  for (const symbolize::MemoryMapping& mapping : mappings) {
    if (!mapping.FileBacked()) {
      previous = nullptr;
      continue;
    }
    const bool continues = previous != nullptr && previous->path == mapping.path &&
                           previous->end <= mapping.start;
    if (!continues) instances.emplace_back();
    instances.back().mappings.push_back(mapping);
    previous = &mapping;
  }
  return instances;
}

std::string AddressSpace::LayoutKey(const Instance& instance) {
  std::string key = instance.mappings.front().path;
  for (const symbolize::MemoryMapping& m : instance.mappings) {
    char segment[96];
    std::snprintf(segment, sizeof(segment), "|%" PRIx64 ",%" PRIx64 ",%" PRIx64 ",",
                  m.start - instance.base(), m.end - instance.base(), m.offset);
    key += segment + m.perms;
  }
  return key;
}

bool AddressSpace::IsFree(uint64_t start, uint64_t end) const {
  auto next = claimed_.upper_bound(start);
  if (next != claimed_.begin() && std::prev(next)->second > start) return false;
  return next == claimed_.end() || next->first >= end;
}

// The module's own base when that is free, else the first aligned place
// above everything claimed. If even that would wrap around 2^64 (only
// corrupt maps get there), the module stays where it is.
uint64_t AddressSpace::NewBase(const Instance& instance) const {
  if (claimed_.empty() || IsFree(instance.base(), instance.end())) return instance.base();
  const uint64_t top = claimed_.rbegin()->second;
  const uint64_t span = instance.end() - instance.base();
  const uint64_t aligned_top = (top / kMoveAlignment + 1) * kMoveAlignment;
  const uint64_t base = aligned_top + instance.base() % kMoveAlignment;
  if (aligned_top < top || base < aligned_top || base + span < base) return instance.base();
  return base;
}

// Keeps claimed_ disjoint by absorbing every range that overlaps.
void AddressSpace::Claim(uint64_t start, uint64_t end) {
  auto it = claimed_.upper_bound(start);
  if (it != claimed_.begin() && std::prev(it)->second >= start) --it;
  while (it != claimed_.end() && it->first <= end) {
    start = std::min(start, it->first);
    end = std::max(end, it->second);
    it = claimed_.erase(it);
  }
  claimed_.emplace(start, end);
}

void AddressSpace::AddLines(const Instance& instance, uint64_t delta) {
  for (const symbolize::MemoryMapping& m : instance.mappings) lines_.push_back(MapsLine(m, delta));
}

std::vector<Relocation> AddressSpace::Place(const std::vector<std::string>& mapped_libraries) {
  const symbolize::ParsedMemoryMap parsed = symbolize::ParseMemoryMap(mapped_libraries);
  std::vector<Relocation> moves;
  if (first_) {
    lines_ = mapped_libraries;
    for (const symbolize::MemoryMapping& m : parsed.mappings) Claim(m.start, m.end);
  }
  for (const Instance& instance : Instances(parsed.mappings)) {
    auto [it, inserted] = base_by_key_.try_emplace(LayoutKey(instance), instance.base());
    if (first_) continue;  // the first dump is the frame of reference
    if (inserted) {
      it->second = NewBase(instance);
      const uint64_t delta = it->second - instance.base();
      Claim(instance.base() + delta, instance.end() + delta);
      AddLines(instance, delta);
    }
    const uint64_t delta = it->second - instance.base();
    if (delta == 0) continue;
    for (const symbolize::MemoryMapping& m : instance.mappings) {
      moves.push_back({m.start, m.end, delta});
    }
  }
  first_ = false;
  std::sort(moves.begin(), moves.end(),
            [](const Relocation& a, const Relocation& b) { return a.start < b.start; });
  return moves;
}

namespace {

// The delta of the relocation holding `lookup`, 0 if none does.
uint64_t DeltaOf(uint64_t lookup, const std::vector<Relocation>& relocations) {
  auto next = std::upper_bound(relocations.begin(), relocations.end(), lookup,
                               [](uint64_t a, const Relocation& r) { return a < r.start; });
  if (next == relocations.begin()) return 0;
  const Relocation& r = *std::prev(next);
  return lookup < r.end ? r.delta : 0;
}

}  // namespace

Relocator::Relocator(std::vector<Relocation> relocations) : relocations_(std::move(relocations)) {
  if (!relocations_.empty()) cache_.resize(kCacheSize);
}

void Relocator::Relocate(std::vector<uint64_t>& stack) {
  if (relocations_.empty()) return;
  for (size_t i = 0; i < stack.size(); ++i) {
    const uint64_t lookup = i == 0 ? stack[i] : stack[i] - 1;
    Slot& slot = cache_[(lookup ^ (lookup >> kCacheBits)) & (kCacheSize - 1)];
    if (!slot.valid || slot.lookup != lookup) slot = {lookup, DeltaOf(lookup, relocations_), true};
    stack[i] += slot.delta;
  }
}

}  // namespace memprof::report::merge
