#include "cli/report/merge/profile_merge.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "cli/report/merge/address_space.h"

namespace memprof::merge {
namespace {

struct StackHash {
  size_t operator()(const std::vector<uint64_t>& stack) const {
    uint64_t hash = 14695981039346656037ULL;  // FNV-1a over the addresses
    for (uint64_t address : stack) hash = (hash ^ address) * 1099511628211ULL;
    return static_cast<size_t>(hash);
  }
};

}  // namespace

SharedSpace IntoOneAddressSpace(std::vector<analysis::HeapProfile> profiles) {
  AddressSpace space;
  for (analysis::HeapProfile& profile : profiles) {
    const std::vector<Relocation> moves = space.Place(profile.mapped_libraries);
    if (moves.empty()) continue;
    for (analysis::Sample& sample : profile.samples) Relocate(sample.stack, moves);
  }
  return {std::move(profiles), space.mapped_libraries()};
}

namespace {

// Of several sampler-written dumps, the latest start: what allocations
// before it may be missing from; what any of them dropped, summed.
void AddCoverage(std::optional<analysis::SamplerCoverage>& sum,
                 const std::optional<analysis::SamplerCoverage>& one) {
  if (!one) return;
  if (!sum) {
    sum = one;
    return;
  }
  sum->since_unix_ms = std::max(sum->since_unix_ms, one->since_unix_ms);
  sum->dropped += one->dropped;
}

}  // namespace

analysis::HeapProfile SumProfiles(std::vector<analysis::HeapProfile> profiles,
                                  std::vector<std::string> mapped_libraries) {
  analysis::HeapProfile sum;
  if (!profiles.empty()) {
    sum.format = profiles.front().format;
    sum.sample_period = profiles.front().sample_period;
  }
  if (profiles.size() == 1) sum = std::move(profiles.front());
  sum.mapped_libraries = std::move(mapped_libraries);
  if (profiles.size() <= 1) return sum;
  std::unordered_map<std::vector<uint64_t>, size_t, StackHash> index;
  for (analysis::HeapProfile& profile : profiles) {
    sum.has_alloc = sum.has_alloc || profile.has_alloc;
    AddCoverage(sum.sampler, profile.sampler);
    for (analysis::Sample& sample : profile.samples) {
      auto [it, inserted] = index.try_emplace(sample.stack, sum.samples.size());
      if (inserted) {
        sum.samples.push_back(std::move(sample));
        continue;
      }
      analysis::AddAmount(sum.samples[it->second].inuse, sample.inuse);
      analysis::AddAmount(sum.samples[it->second].alloc, sample.alloc);
    }
  }
  return sum;
}

}  // namespace memprof::merge
