#include "common/sample_interval.h"

#include <gtest/gtest.h>

namespace memprof {
namespace {

TEST(SampleIntervalLgTest, PowersOfTwoWithinBoundsGiveTheirExponent) {
  EXPECT_EQ(SampleIntervalLg(1).value(), 0u);
  EXPECT_EQ(SampleIntervalLg(2).value(), 1u);
  EXPECT_EQ(SampleIntervalLg(512 * 1024).value(), 19u);
  EXPECT_EQ(SampleIntervalLg(uint64_t{1} << 20).value(), 20u);
  EXPECT_EQ(SampleIntervalLg(kMaxSampleIntervalBytes).value(), 30u);
}

TEST(SampleIntervalLgTest, OutOfBoundsIsRejected) {
  for (uint64_t bad : {uint64_t{0}, uint64_t{1} << 31, uint64_t{1} << 63}) {
    auto r = SampleIntervalLg(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("outside 1 byte..1 GiB"), std::string::npos)
        << r.error().message;
  }
}

TEST(SampleIntervalLgTest, NonPowersOfTwoAreRejected) {
  for (uint64_t bad : {uint64_t{3}, uint64_t{1000}, (uint64_t{1} << 30) - 1}) {
    auto r = SampleIntervalLg(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().message,
              "sample interval of " + std::to_string(bad) +
                  " bytes is not a power of two (jemalloc samples every 2^n bytes on average)");
  }
}

}  // namespace
}  // namespace memprof
