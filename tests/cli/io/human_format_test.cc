#include "cli/io/human_format.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

TEST(HumanFormatTest, FormatBytesUsesBinaryUnitsWithOneDecimal) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(12897485), "12.3 MiB");
  EXPECT_EQ(FormatBytes(uint64_t{1} << 30), "1.0 GiB");
  // Just under the next unit rounds up into it rather than printing "1024.0 KiB".
  EXPECT_EQ(FormatBytes(1024 * 1024 - 1), "1.0 MiB");
  EXPECT_EQ(FormatBytes(UINT64_MAX), "16.0 EiB");
}

TEST(HumanFormatTest, FormatPercent) {
  EXPECT_EQ(FormatPercent(0.0), "0.0%");
  EXPECT_EQ(FormatPercent(0.054), "5.4%");
  EXPECT_EQ(FormatPercent(1.0), "100.0%");
}

TEST(HumanFormatTest, FormatRelativeRoundsToSeconds) {
  const system_clock::time_point now{milliseconds(1'700'000'000'000)};
  const int64_t now_ms = 1'700'000'000'000;
  EXPECT_EQ(FormatRelative(now_ms + 299'900, now), "in 5m");
  EXPECT_EQ(FormatRelative(now_ms + 90'000, now), "in 1m30s");
  EXPECT_EQ(FormatRelative(now_ms - 200'000, now), "3m20s ago");
  EXPECT_EQ(FormatRelative(now_ms + 200, now), "now");
}

TEST(HumanFormatTest, FormatLocalTimeUsesTheLocalZone) {
  const char* old_tz = std::getenv("TZ");
  const std::string saved = old_tz ? old_tz : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  EXPECT_EQ(FormatLocalTime(1'700'000'000'000), "2023-11-14 22:13:20");
  ::setenv("TZ", "IST-5:30", 1);  // POSIX form of UTC+5:30, needs no tzdata
  ::tzset();
  EXPECT_EQ(FormatLocalTime(1'700'000'000'000), "2023-11-15 03:43:20");
  if (old_tz) {
    ::setenv("TZ", saved.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
}

TEST(HumanFormatTest, ToUnixMillis) {
  EXPECT_EQ(ToUnixMillis(system_clock::time_point{milliseconds(1234)}), 1234);
}

}  // namespace
}  // namespace memprof::cli
