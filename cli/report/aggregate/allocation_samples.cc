#include "cli/report/aggregate/allocation_samples.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "cli/report/aggregate/unsample.h"

namespace memprof::report::aggregate {

Amount UnsampleAllocation(uint64_t usize, uint64_t sample_interval) {
  // One object of that size: the same arithmetic as a heap_v2 stack's.
  return UnsampleCounts(parse::RawCounts{1, usize}, sample_interval);
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
  absl::flat_hash_map<const std::vector<uint64_t>*, uint32_t, report::StackHasher,
                      StackPointerEqual>
      index;
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

}  // namespace memprof::report::aggregate
