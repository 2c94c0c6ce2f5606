#include "common/duration.h"

#include <gtest/gtest.h>

namespace memprof {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(DurationTest, AcceptsEachUnit) {
  EXPECT_EQ(ParseDuration("30s").value(), seconds(30));
  EXPECT_EQ(ParseDuration("5m").value(), minutes(5));
  EXPECT_EQ(ParseDuration("1h").value(), hours(1));
  EXPECT_EQ(ParseDuration("1500ms").value(), milliseconds(1500));
}

TEST(DurationTest, AcceptsSums) {
  EXPECT_EQ(ParseDuration("1h30m").value(), minutes(90));
  EXPECT_EQ(ParseDuration("1m30s").value(), seconds(90));
}

TEST(DurationTest, RejectsBareNumberAndSaysWhy) {
  auto r = ParseDuration("30");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("missing unit"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("30s"), std::string::npos) << r.error().message;
}

TEST(DurationTest, RejectsUnknownUnitListingValidOnes) {
  auto r = ParseDuration("3d");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("unknown unit 'd'"), std::string::npos);
  EXPECT_NE(r.error().message.find("ms, s, m, h"), std::string::npos);
}

TEST(DurationTest, RejectsGarbage) {
  for (const char* text : {"", "abc", "-5s", "s", "5 s", "1h-", "5S"}) {
    auto r = ParseDuration(text);
    EXPECT_FALSE(r) << text;
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << text;
    }
  }
}

TEST(DurationTest, RejectsSignsWithoutOverflow) {
  for (const char* text : {"-5s", "+5s", "1h-5m", "-9223372036854775807ms"}) {
    auto r = ParseDuration(text);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find("negative or signed"), std::string::npos) << r.error().message;
  }
}

TEST(DurationTest, EnforcesDefaultBounds) {
  EXPECT_FALSE(ParseDuration("0s"));
  EXPECT_FALSE(ParseDuration("999ms"));
  EXPECT_TRUE(ParseDuration("1s"));
  EXPECT_TRUE(ParseDuration("24h"));
  auto r = ParseDuration("25h");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("between 1s and 24h"), std::string::npos) << r.error().message;
}

TEST(DurationTest, RejectsOverflow) {
  EXPECT_FALSE(ParseDuration("99999999999999999999h"));
  EXPECT_FALSE(ParseDuration("9223372036854775807h", milliseconds(0), hours(1000000)));
}

TEST(DurationTest, CustomBounds) {
  EXPECT_EQ(ParseDuration("100ms", milliseconds(100), hours(1)).value(), milliseconds(100));
}

TEST(DurationTest, FormatRoundTrips) {
  EXPECT_EQ(FormatDuration(minutes(90)), "1h30m");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1s500ms");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
  for (const char* text : {"1h30m", "45s", "24h", "2m5s"}) {
    EXPECT_EQ(FormatDuration(ParseDuration(text).value()), text);
  }
}

}  // namespace
}  // namespace memprof
