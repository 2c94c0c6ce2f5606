#ifndef MEMPROF_TESTS_CLI_REPORT_AGGREGATE_FAKE_SYMBOLIZER_H_
#define MEMPROF_TESTS_CLI_REPORT_AGGREGATE_FAKE_SYMBOLIZER_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/base_profile.h"
#include "cli/report/aggregate/symbolization.h"
#include "cli/report/model/profile.h"

namespace memprof::report::aggregate::testing {

// Resolves by 256-byte "functions": every address in [0xN00, 0xNff] gets
// the frames registered for N. Unknown addresses get one empty Frame.
class FakeSymbolizer final : public AddressSymbolizer {
 public:
  FakeSymbolizer() {
    Add(0x1, {{"prof_backtrace_impl", "prof.c", 10, "libjemalloc.so.2", 0x100}});
    Add(0x2, {{"malloc", "", 0, "libjemalloc.so.2", 0x200}});
    Add(0x3, {{"Leaf(int)", "leaf.cc", 12, "app", 0x300}});
    Add(0x4, {{"Helper<int>(int)", "helper.h", 5, "app", 0x400},
              {"Caller(int)", "caller.cc", 40, "app", 0x400}});
    Add(0x5, {{"main", "main.cc", 3, "app", 0x500}});
    Add(0x6, {{"operator new(unsigned long)", "", 0, "libstdc++.so.6", 0x600}});
    Add(0x7, {{"Recursive(int)", "rec.cc", 7, "app", 0x700}});
  }

  void Add(uint64_t bucket, std::vector<Frame> frames) { frames_[bucket] = std::move(frames); }

  std::span<const Frame> Resolve(uint64_t address) override {
    ++calls;
    auto it = frames_.find(address >> 8);
    if (it == frames_.end()) return {&unknown_, 1};
    return it->second;
  }

  int calls = 0;

 private:
  std::map<uint64_t, std::vector<Frame>> frames_;
  Frame unknown_;
};

// The profile the aggregation and report tests share (raw stacks, leaf
// first; callers at +0x10 so that address - 1 stays in the same bucket):
//   S1 malloc path through an inlined helper    1000 B  10 objects
//   S2 operator new path                         500 B   5 objects
//   S3 no allocator frames, recursion            250 B   2 objects
//   S4 an unknown caller                         100 B   1 object
//   S5 nothing but allocator frames               50 B   1 object
inline HeapProfile SharedProfile() {
  HeapProfile profile;
  profile.sample_period = 1;
  auto add = [&](std::vector<uint64_t> stack, double bytes, double objects) {
    profile.samples.push_back({std::move(stack), {objects, bytes}, {objects * 2, bytes * 2}});
  };
  add({0x110, 0x210, 0x310, 0x410, 0x510}, 1000, 10);
  add({0x110, 0x610, 0x410, 0x510}, 500, 5);
  add({0x310, 0x710, 0x720, 0x510}, 250, 2);
  add({0x110, 0x210, 0x900}, 100, 1);
  add({0x110, 0x210}, 50, 1);
  profile.has_alloc = true;
  return profile;
}

// A --base diff with every kind of change (raw stacks as in SharedProfile):
//   S1 malloc path through Helper to Leaf     now 1500, base 1000: +500
//   S3 recursion                              now  250, base  250: 0
//   S6 main -> Leaf, new                      now  300            : +300
//   S2 operator new path, gone                base 500            : -500
//   S4 an unknown caller, gone                base 100            : -100
// Named, Caller -> Helper loses 500 at Helper itself and gains 500 in Leaf:
// no net change there, but 1000 B moved.
inline HeapProfile SharedDiffProfile() {
  HeapProfile now;
  HeapProfile base;
  now.sample_period = base.sample_period = 1;
  auto add = [](HeapProfile& profile, std::vector<uint64_t> stack, double bytes) {
    profile.samples.push_back({std::move(stack), {bytes / 100, bytes}, {}});
  };
  add(now, {0x110, 0x210, 0x310, 0x410, 0x510}, 1500);
  add(now, {0x310, 0x710, 0x720, 0x510}, 250);
  add(now, {0x310, 0x520}, 300);
  add(base, {0x110, 0x210, 0x310, 0x410, 0x510}, 1000);
  add(base, {0x310, 0x710, 0x720, 0x510}, 250);
  add(base, {0x110, 0x610, 0x410, 0x510}, 500);
  add(base, {0x110, 0x210, 0x900}, 100);
  return SubtractBase(now, base);
}

// SharedDiffProfile aggregated with the FakeSymbolizer and no filters.
inline Aggregation AggregateDiff() {
  FakeSymbolizer symbolizer;
  auto aggregation = AggregateProfile(SharedDiffProfile(), symbolizer, {});
  EXPECT_TRUE(aggregation.has_value());
  return aggregation.value_or(Aggregation{});
}

}  // namespace memprof::report::aggregate::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_AGGREGATE_FAKE_SYMBOLIZER_H_
