#include "cli/report/aggregate/allocation_samples.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/lifetimes.h"
#include "tests/cli/report/aggregate/fake_symbolizer.h"

namespace memprof::report::aggregate {
namespace {

// Stacks in the FakeSymbolizer's buckets: malloc -> Leaf -> main, and
// malloc -> Caller's inlined Helper -> main.
const std::vector<uint64_t> kLeafStack = {0x210, 0x310, 0x510};
const std::vector<uint64_t> kHelperStack = {0x210, 0x410, 0x510};

AllocationRecord Record(uint64_t usize, std::vector<uint64_t> stack, uint64_t alloc_ns,
                        std::optional<uint64_t> dalloc_ns, bool released) {
  AllocationRecord record;
  record.size = usize;
  record.usize = usize;
  record.alloc_stack = std::move(stack);
  record.alloc_time_ns = alloc_ns;
  record.dalloc_time_ns = dalloc_ns;
  record.released = released;
  return record;
}

// A 1 s window [1000, 1000000999] ns, sample interval 1024.
AllocationProfile Window() {
  AllocationProfile profile;
  profile.header.window_start_ns = 1000;
  profile.header.window_end_ns = 1000 + 1000000000;
  profile.header.sample_interval = 1024;
  profile.header.clock_resolution_ns = 1;
  return profile;
}

TEST(AllocationSamplesTest, EachRecordIsUnsampledByItsOwnSize) {
  // z = P: one sample stands for 1/(1 - e^-1) objects.
  const double scale = 1 / (1 - std::exp(-1.0));
  const Amount at_interval = UnsampleAllocation(1024, 1024);
  EXPECT_DOUBLE_EQ(at_interval.objects, scale);
  EXPECT_DOUBLE_EQ(at_interval.bytes, 1024 * scale);
  EXPECT_NEAR(at_interval.bytes, 1619.94, 0.01);
  // Far above the interval a sample is (almost) one allocation.
  EXPECT_NEAR(UnsampleAllocation(1 << 30, 1024).objects, 1.0, 1e-12);
  // Far below it, the scale tends to P/z.
  EXPECT_NEAR(UnsampleAllocation(1, 1 << 20).objects, double(1 << 20), 1.0);
  EXPECT_DOUBLE_EQ(UnsampleAllocation(0, 1024).objects, 1.0);
}

TEST(AllocationSamplesTest, AllocIsEveryRecordInTheWindowAndInuseTheSurvivors) {
  AllocationProfile input = Window();
  input.records = {Record(1024, kLeafStack, 2000, 3000, true),
                   Record(1024, kLeafStack, 4000, std::nullopt, false),
                   Record(2048, kHelperStack, 5000, std::nullopt, true),       // freed, no time
                   Record(1024, kHelperStack, 6000, 2000000000, true),         // freed after the end
                   Record(4096, kLeafStack, 2000000000, std::nullopt, false)};  // after the window
  AllocationSamples samples = ToHeapProfile(input);
  const HeapProfile& profile = samples.profile;
  EXPECT_TRUE(profile.has_alloc);
  EXPECT_EQ(profile.sample_period, 1024u);
  ASSERT_EQ(profile.samples.size(), 2u);
  const Amount one = UnsampleAllocation(1024, 1024);
  const Amount two = UnsampleAllocation(2048, 1024);
  EXPECT_EQ(profile.samples[0].stack, kLeafStack);
  EXPECT_DOUBLE_EQ(profile.samples[0].alloc.bytes, 2 * one.bytes);
  EXPECT_DOUBLE_EQ(profile.samples[0].inuse.bytes, one.bytes);
  EXPECT_DOUBLE_EQ(profile.samples[1].alloc.objects, one.objects + two.objects);
  // Freed after the window's end: it survived the window.
  EXPECT_DOUBLE_EQ(profile.samples[1].inuse.objects, one.objects);
  EXPECT_EQ(samples.sample_of_record,
            (std::vector<uint32_t>{0, 0, 1, 1, AllocationSamples::kOutsideWindow}));
  EXPECT_EQ(samples.summary.records, 5u);
  EXPECT_EQ(samples.summary.records_in_window, 4u);
  EXPECT_EQ(samples.summary.covered_ns, 1000000000u);
}

TEST(AllocationSamplesTest, LostRecordsShortenTheCoveredSpan) {
  AllocationProfile input = Window();
  input.header.records_lost = true;
  input.records = {Record(1024, kLeafStack, 500001000, std::nullopt, false)};
  EXPECT_EQ(Summarize(input).covered_ns, 500000000u);
}

TEST(AllocationSamplesTest, TheDefaultRankingIsByBytesAllocated) {
  AllocationProfile input = Window();
  // Leaf allocates more, Helper's allocations survive more.
  input.records = {Record(8192, kLeafStack, 2000, 3000, true),
                   Record(8192, kLeafStack, 2000, 3000, true),
                   Record(4096, kHelperStack, 2000, std::nullopt, false)};
  AllocationSamples samples = ToHeapProfile(input);
  testing::FakeSymbolizer symbolizer;
  AggregateOptions options;
  options.metric = Metric::kAllocSpace;
  auto allocated = AggregateProfile(samples.profile, symbolizer, options);
  ASSERT_TRUE(allocated.has_value());
  EXPECT_EQ(allocated->functions.front().name, "Leaf");
  options.metric = Metric::kInuseSpace;
  auto survived = AggregateProfile(samples.profile, symbolizer, options);
  ASSERT_TRUE(survived.has_value());
  EXPECT_EQ(survived->functions.front().name, "Helper (inline)");
  EXPECT_DOUBLE_EQ(survived->total, UnsampleAllocation(4096, 1024).bytes);
}

TEST(LifetimesTest, PercentilesAreWeightedByObjects) {
  std::vector<WeightedLifetime> lifetimes = {{300, 1}, {100, 1}, {200, 8}};
  EXPECT_EQ(WeightedPercentile(lifetimes, 0.05), 100u);
  EXPECT_EQ(WeightedPercentile(lifetimes, 0.50), 200u);
  EXPECT_EQ(WeightedPercentile(lifetimes, 0.90), 200u);
  EXPECT_EQ(WeightedPercentile(lifetimes, 0.91), 300u);
  EXPECT_EQ(WeightedPercentile(lifetimes, 0.99), 300u);
  std::vector<WeightedLifetime> none;
  EXPECT_FALSE(WeightedPercentile(none, 0.5).has_value());
}

TEST(LifetimesTest, SitesAreFlatFunctionsSortedByBytesAllocated) {
  AllocationProfile input = Window();
  input.records = {Record(1 << 20, kLeafStack, 2000, 2000 + 10, true),
                   Record(1 << 20, kLeafStack, 2000, 2000 + 30, true),
                   Record(1 << 20, kLeafStack, 2000, std::nullopt, true),  // no lifetime
                   Record(1 << 20, kLeafStack, 2000, std::nullopt, false),
                   Record(1 << 21, kHelperStack, 2000, std::nullopt, false)};
  AllocationSamples samples = ToHeapProfile(input);
  testing::FakeSymbolizer symbolizer;
  const InternedAddresses interned = InternLookupAddresses(samples.profile);
  const std::vector<std::string> names =
      FlatFunctionNames(samples.profile, symbolizer, interned, false);
  EXPECT_EQ(names, (std::vector<std::string>{"Leaf", "Helper (inline)"}));
  const std::vector<LifetimeSite> sites = ComputeLifetimes(input, samples, names);
  ASSERT_EQ(sites.size(), 2u);
  const LifetimeSite& leaf = sites[0];
  EXPECT_EQ(leaf.function, "Leaf");
  // A MiB is far above the interval: every sample is one allocation.
  EXPECT_NEAR(leaf.allocated.bytes, 4 << 20, 1e-3);
  EXPECT_NEAR(leaf.freed.bytes, 3 << 20, 1e-3);
  EXPECT_NEAR(leaf.survived.objects, 1, 1e-9);
  EXPECT_NEAR(leaf.allocation_rate, 4 << 20, 1e-3);  // per second of a 1 s window
  EXPECT_EQ(leaf.lifetime_p50_ns, 10u);
  EXPECT_EQ(leaf.lifetime_p99_ns, 30u);
  const LifetimeSite& helper = sites[1];
  EXPECT_EQ(helper.function, "Helper (inline)");
  EXPECT_NEAR(helper.survived.bytes, 2 << 20, 1e-3);
  EXPECT_FALSE(helper.lifetime_p50_ns.has_value());
}

}  // namespace
}  // namespace memprof::report::aggregate
