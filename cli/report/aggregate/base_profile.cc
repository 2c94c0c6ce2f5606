#include "cli/report/aggregate/base_profile.h"

#include <cstdint>
#include <map>
#include <vector>

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

}  // namespace

HeapProfile SubtractBase(const HeapProfile& profile, const HeapProfile& base, bool drop_negative) {
  HeapProfile result;
  result.format = profile.format;
  result.sample_period = profile.sample_period;
  result.has_alloc = profile.has_alloc || base.has_alloc;
  result.mapped_libraries = profile.mapped_libraries;
  result.is_diff = !drop_negative;
  result.sampler = profile.sampler;
  std::map<const std::vector<uint64_t>*, const Sample*,
           decltype([](const auto* a, const auto* b) { return *a < *b; })>
      base_by_stack;
  for (const Sample& sample : base.samples) base_by_stack.emplace(&sample.stack, &sample);
  static const Sample kNone;
  for (const Sample& sample : profile.samples) {
    auto it = base_by_stack.find(&sample.stack);
    const Sample& old = it == base_by_stack.end() ? kNone : *it->second;
    if (it != base_by_stack.end()) base_by_stack.erase(it);
    result.samples.push_back({sample.stack, Difference(sample.inuse, old.inuse, drop_negative),
                              Difference(sample.alloc, old.alloc, drop_negative)});
    if (!drop_negative) result.base.push_back({old.inuse, old.alloc});
  }
  if (drop_negative) return result;
  for (const Sample& old : base.samples) {
    if (!base_by_stack.contains(&old.stack)) continue;  // matched above
    result.samples.push_back({old.stack, Negated(old.inuse), Negated(old.alloc)});
    result.base.push_back({old.inuse, old.alloc});
  }
  return result;
}

}  // namespace memprof::report::aggregate
