// --base before any format: what SubtractBase records of the base, and the
// aggregation of the shared fake-symbolized diff (the formats' tests are
// tests/cli/report/render/diff_report_test.cc).
#include <gtest/gtest.h>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/base_profile.h"
#include "tests/cli/report/aggregate/fake_symbolizer.h"

namespace memprof::report::aggregate {
namespace {

using testing::AggregateDiff;
using testing::FakeSymbolizer;
using testing::SharedDiffProfile;

TEST(SubtractBaseTest, RecordsTheBaseOfEveryStack) {
  HeapProfile diff = SharedDiffProfile();
  EXPECT_TRUE(diff.is_diff);
  ASSERT_EQ(diff.samples.size(), 5u);
  ASSERT_EQ(diff.base.size(), 5u);
  EXPECT_EQ(diff.samples[0].inuse.bytes, 500);
  EXPECT_EQ(diff.base[0].inuse.bytes, 1000);
  EXPECT_EQ(diff.base[2].inuse.bytes, 0);        // new
  EXPECT_EQ(diff.samples[3].inuse.bytes, -500);  // gone
  EXPECT_EQ(diff.base[3].inuse.bytes, 500);
  EXPECT_EQ(diff.base[3].inuse.objects, 5);
}

TEST(SubtractBaseTest, DropNegativeIsNotADiff) {
  HeapProfile profile = testing::SharedProfile();
  HeapProfile dropped = SubtractBase(profile, profile, true);
  EXPECT_FALSE(dropped.is_diff);
  EXPECT_TRUE(dropped.base.empty());
  FakeSymbolizer symbolizer;
  auto aggregation = AggregateProfile(dropped, symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  EXPECT_FALSE(aggregation->is_diff);
  EXPECT_TRUE(aggregation->stacks.empty());  // all zero: left out as before
}

TEST(DiffAggregationTest, KeepsUnchangedStacksForTheirBase) {
  Aggregation aggregation = AggregateDiff();
  EXPECT_TRUE(aggregation.is_diff);
  EXPECT_EQ(aggregation.total, 200);
  EXPECT_EQ(aggregation.total_base, 1850);
  ASSERT_EQ(aggregation.stacks.size(), 5u);
  EXPECT_EQ(aggregation.stacks[1].value, 0);  // the recursion did not change
  EXPECT_EQ(aggregation.stacks[1].base, 250);
}

}  // namespace
}  // namespace memprof::report::aggregate
