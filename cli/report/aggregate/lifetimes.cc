#include "cli/report/aggregate/lifetimes.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace memprof::report::aggregate {
namespace {

// A site while its records are summed.
struct SiteTotals {
  LifetimeSite site;
  std::vector<WeightedLifetime> lifetimes;
};

void AddRecord(SiteTotals& totals, const AllocationRecord& record,
               const AllocationProfileHeader& header) {
  const Amount amount = UnsampleAllocation(record.usize, header.sample_interval);
  AddAmount(totals.site.allocated, amount);
  if (!FreedInWindow(record, header)) {
    AddAmount(totals.site.survived, amount);
    return;
  }
  AddAmount(totals.site.freed, amount);
  if (!record.dalloc_time_ns) return;
  const uint64_t freed = *record.dalloc_time_ns;
  const uint64_t lifetime = freed > record.alloc_time_ns ? freed - record.alloc_time_ns : 0;
  totals.lifetimes.push_back({lifetime, amount.objects});
}

LifetimeSite Finish(SiteTotals& totals, uint64_t covered_ns) {
  LifetimeSite site = std::move(totals.site);
  if (covered_ns > 0) {
    site.allocation_rate = site.allocated.bytes * 1e9 / static_cast<double>(covered_ns);
  }
  site.lifetime_p50_ns = WeightedPercentile(totals.lifetimes, 0.50);
  site.lifetime_p90_ns = WeightedPercentile(totals.lifetimes, 0.90);
  site.lifetime_p99_ns = WeightedPercentile(totals.lifetimes, 0.99);
  return site;
}

}  // namespace

std::optional<uint64_t> WeightedPercentile(std::vector<WeightedLifetime>& lifetimes,
                                           double fraction) {
  std::sort(lifetimes.begin(), lifetimes.end(),
            [](const WeightedLifetime& a, const WeightedLifetime& b) { return a.ns < b.ns; });
  double total = 0;
  for (const WeightedLifetime& lifetime : lifetimes) total += lifetime.weight;
  if (!(total > 0)) return std::nullopt;
  const double wanted = fraction * total;
  double running = 0;
  for (const WeightedLifetime& lifetime : lifetimes) {
    running += lifetime.weight;
    if (running >= wanted) return lifetime.ns;
  }
  return lifetimes.back().ns;  // rounding left `running` a hair below `wanted`
}

std::vector<LifetimeSite> ComputeLifetimes(const AllocationProfile& profile,
                                           const AllocationSamples& samples,
                                           const std::vector<std::string>& site_of_sample) {
  std::vector<SiteTotals> sites;
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t i = 0; i < profile.records.size(); ++i) {
    const uint32_t sample = samples.sample_of_record[i];
    if (sample == AllocationSamples::kOutsideWindow) continue;
    const std::string& name = site_of_sample[sample];
    auto [it, inserted] = index.try_emplace(name.empty() ? kAllocatorOnlySite : name, sites.size());
    if (inserted) {
      sites.emplace_back();
      sites.back().site.function = it->first;
    }
    AddRecord(sites[it->second], profile.records[i], profile.header);
  }
  std::vector<LifetimeSite> result;
  result.reserve(sites.size());
  for (SiteTotals& totals : sites) result.push_back(Finish(totals, samples.summary.covered_ns));
  std::sort(result.begin(), result.end(), [](const LifetimeSite& a, const LifetimeSite& b) {
    if (a.allocated.bytes != b.allocated.bytes) return a.allocated.bytes > b.allocated.bytes;
    return a.function < b.function;
  });
  return result;
}

}  // namespace memprof::report::aggregate
