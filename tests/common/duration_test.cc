#include "common/duration.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

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
  for (const char* text : {"", "abc", "-5s", "s", "5 s", "1h-", ".", "1.s", "1,5s", "1.5"}) {
    auto r = ParseDuration(text);
    EXPECT_FALSE(r) << text;
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << text;
    }
  }
}

// Users type "1H" and "10M" (minutes: a duration has no months), "1.5s"
// and "0.5h"; fractions count down to whole milliseconds.
TEST(DurationTest, AcceptsUnitsInAnyLetterCaseAndFractions) {
  // clang-format off
  const std::vector<std::pair<const char*, milliseconds>> cases = {
      {"1H", hours(1)}, {"10M", minutes(10)}, {"30S", seconds(30)}, {"1H30M", minutes(90)},
      {"1500MS", milliseconds(1500)}, {"1500Ms", milliseconds(1500)}, {".5m", seconds(30)},
      {"1.5s", milliseconds(1500)}, {"0.5h", minutes(30)}, {"1.25h", minutes(75)},
      {"2.500s", milliseconds(2500)}, {"1.001s", milliseconds(1001)}, {"0.1s", milliseconds(100)},
      {"0.0001h", milliseconds(360)}, {"1h0.5m", seconds(3630)}};
  // clang-format on
  for (const auto& [text, expected] : cases) {
    auto parsed = ParseDuration(text, milliseconds(1), hours(24));
    ASSERT_TRUE(parsed) << text << ": " << parsed.error().message;
    EXPECT_EQ(*parsed, expected) << text;
  }
}

TEST(DurationTest, RejectsFractionsFinerThanAMillisecond) {
  for (const char* text : {"1.0005s", "1.5ms", "0.00000001h", "1.1234567890123456789s"}) {
    auto r = ParseDuration(text, milliseconds(0), hours(24));
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find("finer than a millisecond"), std::string::npos)
        << r.error().message;
  }
}

// A number with a fraction still needs a unit, and still has bounds.
TEST(DurationTest, FractionsKeepTheUnitAndTheBounds) {
  auto bare = ParseDuration("1.5");
  ASSERT_FALSE(bare);
  EXPECT_NE(bare.error().message.find("missing unit"), std::string::npos) << bare.error().message;
  auto small = ParseDuration("0.5s");
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().message.find("must be between 1s and 24h"), std::string::npos);
  auto big = ParseDuration("24.5H");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("must be between 1s and 24h"), std::string::npos);
}

TEST(DurationTest, SaysWhatIsWrongWithAFraction) {
  EXPECT_NE(ParseDuration("1.s").error().message.find("expected digits after the decimal point"),
            std::string::npos);
  EXPECT_NE(ParseDuration("1,5s").error().message.find("unexpected ',' after a number"),
            std::string::npos);
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
  for (const char* text : {"1h30m", "45s", "24h", "2m5s", "1s500ms"}) {
    EXPECT_EQ(FormatDuration(ParseDuration(text).value()), text);
  }
}

}  // namespace
}  // namespace memprof
