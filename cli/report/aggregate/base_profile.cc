#include "cli/report/aggregate/base_profile.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cli/report/aggregate/unsample.h"
#include "cli/report/model/stack_hash.h"

namespace memprof::report::aggregate {
namespace {

double Difference(double a, double b, bool drop_negative) {
  double difference = a - b;
  return drop_negative && difference < 0 ? 0 : difference;
}

Amount Difference(const Amount& a, const Amount& b, bool drop_negative) {
  return {Difference(a.objects, b.objects, drop_negative),
          Difference(a.bytes, b.bytes, drop_negative)};
}

// jeprof writes `0 - $B->{$k}` for base-only stacks.
Amount Negated(const Amount& b) { return {0.0 - b.objects, 0.0 - b.bytes}; }

// The base's samples by stack (pointing into `base`, not copying it); each
// matches at most one sample of the profile.
class BaseIndex {
 public:
  explicit BaseIndex(const HeapProfile& base) : matched_(base.samples.size(), 0) {
    index_.reserve(base.samples.size());
    for (size_t i = 0; i < base.samples.size(); ++i) index_.emplace(&base.samples[i].stack, i);
  }
  // The base sample with this stack not matched before, or nullopt.
  std::optional<size_t> Match(const std::vector<uint64_t>& stack) {
    auto it = index_.find(&stack);
    if (it == index_.end() || matched_[it->second] != 0) return std::nullopt;
    matched_[it->second] = 1;
    return it->second;
  }
  bool matched(size_t base_sample) const { return matched_[base_sample] != 0; }

 private:
  absl::flat_hash_map<const std::vector<uint64_t>*, size_t, StackHasher, StackPointerEqual> index_;
  std::vector<uint8_t> matched_;
};

}  // namespace

HeapProfile SubtractBase(HeapProfile profile, HeapProfile base, bool drop_negative) {
  HeapProfile result;
  result.format = profile.format;
  result.sample_period = profile.sample_period;
  result.has_alloc = profile.has_alloc || base.has_alloc;
  result.mapped_libraries = std::move(profile.mapped_libraries);
  result.is_diff = !drop_negative;
  result.sampler = profile.sampler;
  BaseIndex index(base);
  static const Sample kNone;
  result.samples.reserve(profile.samples.size() + (drop_negative ? 0 : base.samples.size()));
  for (Sample& sample : profile.samples) {
    const std::optional<size_t> match = index.Match(sample.stack);
    const Sample& old = match ? base.samples[*match] : kNone;
    result.samples.push_back({std::move(sample.stack),
                              Difference(sample.inuse, old.inuse, drop_negative),
                              Difference(sample.alloc, old.alloc, drop_negative)});
    if (!drop_negative) result.base.push_back({old.inuse, old.alloc});
  }
  if (drop_negative) return result;
  for (size_t i = 0; i < base.samples.size(); ++i) {
    if (index.matched(i)) continue;
    Sample& old = base.samples[i];
    result.samples.push_back({std::move(old.stack), Negated(old.inuse), Negated(old.alloc)});
    result.base.push_back({old.inuse, old.alloc});
  }
  return result;
}

}  // namespace memprof::report::aggregate
