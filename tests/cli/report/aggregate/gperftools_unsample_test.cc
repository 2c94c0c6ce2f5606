// Unsampling gperftools' profiles as pprof does (the parser's own tests are
// tests/cli/report/parse/gperftools_parser_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "cli/report/aggregate/unsample.h"
#include "cli/report/parse/gperftools_parser.h"
#include "tests/cli/report/parse/gperftools_profiles.h"

namespace memprof::report::aggregate {
namespace {

using parse::testing::kHeapProfile;
using parse::testing::kHeapSample;

TEST(GperftoolsParserTest, TheHeapProfilersCountsAreExact) {
  auto dump = parse::ParseGperftoolsText(kHeapProfile, "t.prof");
  ASSERT_TRUE(dump.has_value());
  HeapProfile profile = Unsample(std::move(*dump));
  EXPECT_EQ(profile.format, DumpFormat::kGperftoolsHeapProfile);
  EXPECT_TRUE(profile.has_alloc);
  ASSERT_EQ(profile.samples.size(), 3u);
  EXPECT_EQ(profile.samples[0].inuse.bytes, 2048);
  EXPECT_EQ(profile.samples[0].inuse.objects, 2);
  EXPECT_EQ(profile.samples[2].alloc.bytes, 1000000);
  EXPECT_EQ(profile.samples[2].inuse.bytes, 0);
}

// pprof's scaleHeapSample for heap_v2/N: 1 / (1 - exp(-average/N)), per line,
// and identical stacks merged after scaling.
TEST(GperftoolsParserTest, TheSamplersCountsAreUnsampledAsPprofDoes) {
  auto dump = parse::ParseGperftoolsText(kHeapSample, "t.prof");
  ASSERT_TRUE(dump.has_value());
  HeapProfile profile = Unsample(std::move(*dump));
  EXPECT_FALSE(profile.has_alloc);
  ASSERT_EQ(profile.samples.size(), 2u);
  const double big = 1 / (1 - std::exp(-1048576.0 / 524288));
  const double small = 1 / (1 - std::exp(-4096.0 / 524288));
  EXPECT_DOUBLE_EQ(profile.samples[0].inuse.objects, 2 * big);
  EXPECT_DOUBLE_EQ(profile.samples[0].inuse.bytes, 2 * 1048576 * big);
  EXPECT_DOUBLE_EQ(profile.samples[1].inuse.bytes, 4096 * small);
  EXPECT_EQ(profile.samples[1].alloc.bytes, 0);
}

TEST(GperftoolsParserTest, APeriodOfOneIsNotScaled) {
  auto dump = parse::ParseGperftoolsText(
      "heap profile: 1: 8 [1: 8] @ heap_v2/1\n1: 8 [1: 8] @ 0x1\n\nMAPPED_LIBRARIES:\n", "t");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  HeapProfile profile = Unsample(std::move(*dump));
  EXPECT_EQ(profile.samples[0].inuse.bytes, 8);
  EXPECT_EQ(profile.sample_period, 1u);
}

}  // namespace
}  // namespace memprof::report::aggregate
