#include "cli/report/aggregate/allocation_samples.h"

#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace memprof::analysis {
namespace {

// FNV-1a over the addresses; stacks are compared in full on a hash match.
struct RecordStackHash {
  size_t operator()(const std::vector<uint64_t>* stack) const {
    uint64_t hash = 14695981039346656037ULL;
    for (uint64_t address : *stack) hash = (hash ^ address) * 1099511628211ULL;
    return static_cast<size_t>(hash);
  }
};

struct RecordStackEqual {
  bool operator()(const std::vector<uint64_t>* a, const std::vector<uint64_t>* b) const {
    return *a == *b;
  }
};

void AddAmount(Amount& into, const Amount& more) {
  into.objects += more.objects;
  into.bytes += more.bytes;
}

}  // namespace

Amount UnsampleAllocation(uint64_t usize, uint64_t sample_interval) {
  const auto bytes = static_cast<double>(usize);
  if (usize == 0 || sample_interval == 0) return {1, bytes};
  const double ratio = bytes / static_cast<double>(sample_interval);
  const double probability = 1 - std::exp(-ratio);
  // Far below the interval the subtraction rounds to 0; 1/ratio is the
  // limit of the scale there (as in UnsampleCounts).
  const double scale = probability > 0 ? 1 / probability : 1 / ratio;
  return {scale, bytes * scale};
}

bool InWindow(const AllocationRecord& record, const AllocationProfileHeader& header) {
  return record.alloc_time_ns <= header.window_end_ns;
}

bool FreedInWindow(const AllocationRecord& record, const AllocationProfileHeader& header) {
  if (!record.released) return false;
  return !record.dalloc_time_ns || *record.dalloc_time_ns <= header.window_end_ns;
}

AllocationSummary Summarize(const AllocationProfile& profile) {
  AllocationSummary summary;
  summary.header = profile.header;
  summary.records = profile.records.size();
  for (const AllocationRecord& record : profile.records) {
    if (!InWindow(record, profile.header)) continue;
    ++summary.records_in_window;
    if (!summary.first_alloc_ns || record.alloc_time_ns < *summary.first_alloc_ns) {
      summary.first_alloc_ns = record.alloc_time_ns;
    }
  }
  summary.covered_ns = profile.header.window_ns();
  if (profile.header.records_lost && summary.first_alloc_ns &&
      *summary.first_alloc_ns > profile.header.window_start_ns) {
    summary.covered_ns = profile.header.window_end_ns - *summary.first_alloc_ns;
  }
  return summary;
}

AllocationSamples ToHeapProfile(AllocationProfile& input) {
  AllocationSamples out;
  out.summary = Summarize(input);
  HeapProfile& profile = out.profile;
  profile.format = DumpFormat::kJemalloc;
  profile.sample_period = input.header.sample_interval;
  profile.has_alloc = true;
  profile.mapped_libraries = std::move(input.mapped_libraries);
  out.sample_of_record.assign(input.records.size(), AllocationSamples::kOutsideWindow);
  // The keys point at the records' stacks, which stay where they are.
  absl::flat_hash_map<const std::vector<uint64_t>*, uint32_t, RecordStackHash, RecordStackEqual> index;
  for (size_t i = 0; i < input.records.size(); ++i) {
    const AllocationRecord& record = input.records[i];
    if (!InWindow(record, input.header)) continue;
    auto [it, inserted] =
        index.try_emplace(&record.alloc_stack, static_cast<uint32_t>(profile.samples.size()));
    if (inserted) profile.samples.push_back({record.alloc_stack, {}, {}});
    Sample& sample = profile.samples[it->second];
    const Amount amount = UnsampleAllocation(record.usize, input.header.sample_interval);
    AddAmount(sample.alloc, amount);
    if (!FreedInWindow(record, input.header)) AddAmount(sample.inuse, amount);
    out.sample_of_record[i] = it->second;
  }
  return out;
}

}  // namespace memprof::analysis
