#include "cli/report/aggregate/unsample.h"

#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "cli/report/model/stack_hash.h"

namespace memprof::report::aggregate {
namespace {

bool HasAlloc(const parse::HeapDump& dump) {
  if (dump.totals.alloc.objects != 0) return true;
  for (const parse::StackRecord& record : dump.records) {
    if (record.counts.alloc.objects != 0) return true;
  }
  return false;
}

// The period the counts are scaled by, 0 for none. gperftools' heap
// profiler counts every allocation; for tcmalloc's sampler pprof (whose
// legacy parser is the reference for that format) scales only periods
// above 1.
uint64_t ScalingPeriod(const parse::HeapDump& dump) {
  switch (dump.format) {
    case DumpFormat::kJemalloc:
      return dump.sample_period;
    case DumpFormat::kGperftoolsHeapProfile:
      return 0;
    case DumpFormat::kGperftoolsHeapSample:
      return dump.sample_period > 1 ? dump.sample_period : 0;
  }
  return 0;
}

// A stack in Unsample's index with its hash, made once for the lookup and
// the insertion both.
struct HashedStack {
  const std::vector<uint64_t>* stack;
  uint64_t hash;
  struct Hash {
    size_t operator()(const HashedStack& key) const { return static_cast<size_t>(key.hash); }
  };
  struct Equal {
    bool operator()(const HashedStack& a, const HashedStack& b) const {
      return a.hash == b.hash && *a.stack == *b.stack;
    }
  };
};

}  // namespace

Amount UnsampleCounts(const parse::RawCounts& counts, uint64_t sample_period) {
  Amount amount{static_cast<double>(counts.objects), static_cast<double>(counts.bytes)};
  // Without bytes the average size is 0 and there is no estimate (the
  // parser rejects such counts; jeprof would divide by zero).
  if (sample_period == 0 || counts.objects == 0 || counts.bytes == 0) return amount;
  // jeprof: $ratio = (($s1*1.0)/$n1)/($sample_adjustment);
  double ratio = (amount.bytes / amount.objects) / static_cast<double>(sample_period);
  double probability = 1 - std::exp(-ratio);
  // Below ~1e-16 the subtraction rounds to 0 (jeprof dies there); 1/ratio is
  // the limit of the scale and keeps the estimate finite.
  double scale = probability > 0 ? 1 / probability : 1 / ratio;
  amount.objects *= scale;
  amount.bytes *= scale;
  return amount;
}

HeapProfile Unsample(parse::HeapDump dump, std::vector<size_t>* merged) {
  HeapProfile profile;
  profile.format = dump.format;
  profile.sample_period = dump.sample_period;
  const uint64_t period = ScalingPeriod(dump);
  profile.has_alloc = HasAlloc(dump);
  profile.mapped_libraries = std::move(dump.mapped_libraries);
  profile.sampler = dump.sampler;
  // Reserved up front, so samples never move: the keys point at their stacks,
  // which are moved (not copied) out of the dump.
  profile.samples.reserve(dump.records.size());
  absl::flat_hash_map<HashedStack, size_t, HashedStack::Hash, HashedStack::Equal> index;
  index.reserve(dump.records.size());
  for (size_t i = 0; i < dump.records.size(); ++i) {
    parse::StackRecord& record = dump.records[i];
    Amount inuse = UnsampleCounts(record.counts.inuse, period);
    Amount alloc = UnsampleCounts(record.counts.alloc, period);
    const uint64_t hash = report::StackHash(record.stack);
    if (auto it = index.find(HashedStack{&record.stack, hash}); it != index.end()) {
      AddAmount(profile.samples[it->second].inuse, inuse);
      AddAmount(profile.samples[it->second].alloc, alloc);
      if (merged != nullptr) merged->push_back(i);
      continue;
    }
    profile.samples.push_back({std::move(record.stack), inuse, alloc});
    index.emplace(HashedStack{&profile.samples.back().stack, hash}, profile.samples.size() - 1);
  }
  return profile;
}

}  // namespace memprof::report::aggregate
