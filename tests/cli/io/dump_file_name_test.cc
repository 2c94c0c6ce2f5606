#include "cli/io/dump_file_name.h"

#include <gtest/gtest.h>

namespace memprof::cli {
namespace {

using std::chrono::system_clock;

// 2026-11-22 21:15:30.750 UTC
const system_clock::time_point kTime =
    system_clock::from_time_t(1795382130) + std::chrono::milliseconds(750);

TEST(DumpFileNameTest, HostPidAndUtcTimestamp) {
  EXPECT_EQ(UtcTimestamp(kTime), "20261122T211530Z");
  EXPECT_EQ(DumpFileName("web1", 1234, kTime, "heap"), "web1-1234-20261122T211530Z.heap");
}

TEST(DumpFileNameTest, TheFormatsExtension) {
  EXPECT_EQ(DumpFileName("web1", 7, kTime, "pb.gz"), "web1-7-20261122T211530Z.pb.gz");
  EXPECT_EQ(DumpFileName("web1", 7, kTime, "svg"), "web1-7-20261122T211530Z.svg");
}

TEST(DumpFileNameTest, LaterAttemptsGetASuffixBeforeTheExtension) {
  EXPECT_EQ(DumpFileName("web1", 7, kTime, "heap", 1), "web1-7-20261122T211530Z-1.heap");
  EXPECT_EQ(DumpFileName("web1", 7, kTime, "heap", 12), "web1-7-20261122T211530Z-12.heap");
}

TEST(DumpFileNameTest, HostNameIsMadeSafeForAFileName) {
  EXPECT_EQ(FileSafeHostName("web1.example.com"), "web1");
  EXPECT_EQ(FileSafeHostName("we b/1"), "we_b_1");
  EXPECT_EQ(FileSafeHostName(""), "host");
  EXPECT_EQ(FileSafeHostName(".hidden"), "host");
  const std::string local = LocalFileSafeHostName();
  EXPECT_FALSE(local.empty());
  EXPECT_EQ(local.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"),
            std::string::npos)
      << local;
}

TEST(DumpFileNameTest, NamesSortByTime) {
  const auto later = kTime + std::chrono::hours(30);
  EXPECT_LT(DumpFileName("h", 1, kTime, "heap"), DumpFileName("h", 1, later, "heap"));
  EXPECT_EQ(UtcTimestamp(later), "20261124T031530Z");
}

}  // namespace
}  // namespace memprof::cli
