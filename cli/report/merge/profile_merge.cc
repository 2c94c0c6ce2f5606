#include "cli/report/merge/profile_merge.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "cli/report/merge/address_space.h"
#include "cli/report/model/stack_hash.h"

namespace memprof::report::merge {
SharedSpace IntoOneAddressSpace(std::vector<report::HeapProfile> profiles) {
  AddressSpace space;
  for (report::HeapProfile& profile : profiles) {
    Relocator relocator(space.Place(profile.mapped_libraries));
    for (report::Sample& sample : profile.samples) relocator.Relocate(sample.stack);
  }
  return {std::move(profiles), space.mapped_libraries()};
}

namespace {

// Of several sampler-written dumps, the latest start: what allocations
// before it may be missing from; what any of them dropped, summed.
void AddCoverage(std::optional<report::SamplerCoverage>& sum,
                 const std::optional<report::SamplerCoverage>& one) {
  if (!one) return;
  if (!sum) {
    sum = one;
    return;
  }
  sum->since_unix_ms = std::max(sum->since_unix_ms, one->since_unix_ms);
  sum->dropped += one->dropped;
}

}  // namespace

report::HeapProfile SumProfiles(std::vector<report::HeapProfile> profiles,
                                  std::vector<std::string> mapped_libraries) {
  report::HeapProfile sum;
  if (!profiles.empty()) {
    sum.format = profiles.front().format;
    sum.sample_period = profiles.front().sample_period;
  }
  if (profiles.size() == 1) sum = std::move(profiles.front());
  sum.mapped_libraries = std::move(mapped_libraries);
  if (profiles.size() <= 1) return sum;
  std::unordered_map<std::vector<uint64_t>, size_t, report::StackHasher> index;
  for (report::HeapProfile& profile : profiles) {
    sum.has_alloc = sum.has_alloc || profile.has_alloc;
    AddCoverage(sum.sampler, profile.sampler);
    for (report::Sample& sample : profile.samples) {
      auto [it, inserted] = index.try_emplace(sample.stack, sum.samples.size());
      if (inserted) {
        sum.samples.push_back(std::move(sample));
        continue;
      }
      report::AddAmount(sum.samples[it->second].inuse, sample.inuse);
      report::AddAmount(sum.samples[it->second].alloc, sample.alloc);
    }
  }
  return sum;
}

}  // namespace memprof::report::merge
