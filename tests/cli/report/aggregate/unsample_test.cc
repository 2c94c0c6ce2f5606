#include "cli/report/aggregate/unsample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/cli/report/parse/test_util.h"

namespace memprof::report::aggregate {
namespace {

// Expected values are jeprof's own arithmetic, run in Perl:
//   my $ratio = (($s*1.0)/$n)/($period); my $scale = 1/(1 - exp(-$ratio));
//   printf("%.17g %.17g\n", $n * $scale, $s * $scale);
// and compared for exact equality: the totals must match jeprof bit for bit.
struct UnsampleCase {
  uint64_t objects;
  uint64_t bytes;
  uint64_t period;
  double want_objects;
  double want_bytes;
};

TEST(UnsampleTest, MatchesJeprofBitForBit) {
  const UnsampleCase cases[] = {
      {1, 100, 524288, 5243.3800158950908, 524338.00158950908},
      {3, 3000, 524288, 1574.3644768370841, 1574364.4768370842},
      {5, 5 * 1048576, 524288, 5.7825882137483289, 6063483.2188193677},
      {10, 80, 4096, 5125.0016276041988, 41000.01302083359},
      {1, 1, 1, 1.5819767068693265, 1.5819767068693265},  // period 1: ratio = average size
      {2, 128, 1, 2, 128},                                // exp(-64) vanishes next to 1: no change
  };
  for (const UnsampleCase& c : cases) {
    Amount amount = UnsampleCounts({c.objects, c.bytes}, c.period);
    EXPECT_EQ(amount.objects, c.want_objects) << c.objects << ":" << c.bytes << "/" << c.period;
    EXPECT_EQ(amount.bytes, c.want_bytes) << c.objects << ":" << c.bytes << "/" << c.period;
  }
}

TEST(UnsampleTest, PeriodZeroLeavesCountsAlone) {
  // jeprof: `if ($sample_adjustment)` is false for heap_v2/0.
  Amount amount = UnsampleCounts({7, 700}, 0);
  EXPECT_EQ(amount.objects, 7);
  EXPECT_EQ(amount.bytes, 700);
}

TEST(UnsampleTest, ZeroObjectsStayZero) {
  Amount amount = UnsampleCounts({0, 0}, 524288);
  EXPECT_EQ(amount.objects, 0);
  EXPECT_EQ(amount.bytes, 0);
}

TEST(UnsampleTest, AHugePeriodStaysFinite) {
  // 1 - exp(-8/2^63) is 0 in doubles (jeprof dies dividing by it); the
  // limit 1/ratio is used instead: 8 bytes sampled at 2^63 stand for 2^63.
  Amount amount = UnsampleCounts({1, 8}, uint64_t{1} << 63);
  EXPECT_TRUE(std::isfinite(amount.objects));
  EXPECT_DOUBLE_EQ(amount.bytes, std::ldexp(1.0, 63));
  EXPECT_DOUBLE_EQ(amount.objects, std::ldexp(1.0, 60));
}

TEST(UnsampleTest, MergesRepeatedStacksAfterUnsamplingEach) {
  parse::HeapDump dump;
  dump.sample_period = 524288;
  dump.records = {{{0x10, 0x20}, {{1, 100}, {0, 0}}},
                  {{0x30}, {{3, 3000}, {0, 0}}},
                  {{0x10, 0x20}, {{3, 3000}, {0, 0}}}};
  HeapProfile profile = Unsample(std::move(dump));
  ASSERT_EQ(profile.samples.size(), 2u);
  EXPECT_EQ(profile.samples[0].stack, (std::vector<uint64_t>{0x10, 0x20}));
  // Unsampled separately, then added (jeprof's AddEntries): not unsample(4, 3100).
  EXPECT_EQ(profile.samples[0].inuse.objects, 5243.3800158950908 + 1574.3644768370841);
  EXPECT_EQ(profile.samples[0].inuse.bytes, 524338.00158950908 + 1574364.4768370842);
  EXPECT_EQ(profile.samples[1].inuse.objects, 1574.3644768370841);
  EXPECT_FALSE(profile.has_alloc);
}

// Which records went into an earlier record's sample: what a caller that
// met the records one by one (a StackInterner) drops to match the samples.
TEST(UnsampleTest, SaysWhichRecordsItMerged) {
  parse::HeapDump dump;
  dump.sample_period = 0;
  dump.records = {{{0x10, 0x20}, {{1, 100}, {0, 0}}},
                  {{0x30}, {{3, 3000}, {0, 0}}},
                  {{0x10, 0x20}, {{3, 3000}, {0, 0}}},
                  {{0x40}, {{1, 8}, {0, 0}}},
                  {{0x30}, {{1, 8}, {0, 0}}}};
  std::vector<size_t> merged;
  HeapProfile profile = Unsample(std::move(dump), &merged);
  EXPECT_EQ(profile.samples.size(), 3u);
  EXPECT_EQ(merged, (std::vector<size_t>{2, 4}));
}

TEST(UnsampleTest, KeepsAccumulatedCountsAndMaps) {
  auto dump = parse::ParseHeapV2File(parse::testing::DataPath("small.heap"));
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  HeapProfile profile = Unsample(std::move(*dump));
  EXPECT_TRUE(profile.has_alloc);
  EXPECT_EQ(profile.sample_period, 524288u);
  ASSERT_EQ(profile.samples.size(), 2u);
  EXPECT_EQ(profile.samples[0].alloc.objects,
            UnsampleCounts({4, 1500}, 524288).objects + UnsampleCounts({2, 100}, 524288).objects);
  EXPECT_EQ(profile.mapped_libraries.size(), 2u);
}

}  // namespace
}  // namespace memprof::report::aggregate
