#include "common/proc_status.h"
#include "common/text_file.h"

#include <unistd.h>

#include <ctime>
#include <string_view>

#include <gtest/gtest.h>

namespace memprof {
namespace {

TEST(ProcStatusTest, ParsesRecordedContainerizedStatus) {
  auto text = ReadTextFile(std::string(MEMPROF_TEST_DATA_DIR) + "/proc/status_containerized.txt");
  ASSERT_TRUE(text) << text.error().message;
  auto st = ParseProcStatus(*text);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->name, "memprof-demo");
  EXPECT_EQ(st->pid, 48211);
  EXPECT_EQ(st->ppid, 48190);
  EXPECT_EQ(st->real_uid, 1000u);
  EXPECT_EQ(st->effective_uid, 1000u);
  EXPECT_EQ(st->ns_pids, (std::vector<pid_t>{48211, 7}));
  EXPECT_EQ(st->vm_rss_bytes, 19456u * 1024);
  EXPECT_EQ(st->threads, 3u);
}

TEST(ProcStatusTest, ParsesOwnLiveStatus) {
  auto text = ReadTextFile("/proc/self/status");
  ASSERT_TRUE(text);
  auto st = ParseProcStatus(*text);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->pid, ::getpid());
  EXPECT_EQ(st->effective_uid, ::geteuid());
  EXPECT_GT(st->vm_rss_bytes, 0u);
  ASSERT_FALSE(st->ns_pids.empty());
}

TEST(ProcStatusTest, RejectsTextWithoutPid) {
  auto st = ParseProcStatus("Name:\tfoo\nUid:\t1 1 1 1\n");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("no Pid"), std::string::npos);
}

TEST(ProcStatusTest, IgnoresMalformedNumbers) {
  auto st = ParseProcStatus("Pid:\tabc\nVmRSS:\t\nThreads:\t-\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->pid, 0);
  EXPECT_EQ(st->vm_rss_bytes, 0u);
}

// Recorded from `cp /bin/sleep './a) b (c'; './a) b (c' 30`: a comm with
// spaces and both parentheses, which a split on ' ' or the first ')' misreads.
constexpr char kStatOfAWeirdName[] =
    "10125 (a) b (c) S 1 10112 7014 0 -1 4194304 130 0 0 0 0 0 0 0 20 0 1 0 95168 2990080 417 "
    "18446744073709551615 94623262068736 94623262086665 140722887062464 0 0 0 0 6 0 1 0 0 17 0 0 "
    "0 0 0 0 94623262100752 94623262102016 94623373213696 140722887068112 140722887068125 "
    "140722887068125 140722887069678 0\n";

// Recorded /proc/1/stat of a container's init (its parent is outside: ppid 0).
constexpr char kStatOfInit[] =
    "1 (process_api) S 0 0 0 0 -1 4194560 32751 2720118 0 840 213 422 7334 5352 10 -10 13 0 19 "
    "44515328 3337 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 "
    "0 0\n";

TEST(ProcStatTest, ParsesACommWithSpacesAndParentheses) {
  auto stat = ParseProcStat(kStatOfAWeirdName);
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->pid, 10125);
  EXPECT_EQ(stat->comm, "a) b (c");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->start_ticks, 95168u);
}

TEST(ProcStatTest, ParsesInitWithParentZero) {
  auto stat = ParseProcStat(kStatOfInit);
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->pid, 1);
  EXPECT_EQ(stat->comm, "process_api");
  EXPECT_EQ(stat->ppid, 0);
  EXPECT_EQ(stat->start_ticks, 19u);
}

TEST(ProcStatTest, ParsesOwnLiveStat) {
  auto text = ReadTextFile("/proc/self/stat");
  ASSERT_TRUE(text);
  auto stat = ParseProcStat(*text);
  ASSERT_TRUE(stat) << stat.error().message;
  EXPECT_EQ(stat->pid, ::getpid());
  EXPECT_EQ(stat->ppid, ::getppid());
  EXPECT_EQ(stat->state, 'R');
  EXPECT_GT(stat->start_ticks, 0u);
}

TEST(ProcStatTest, RejectsTruncatedAndForeignText) {
  EXPECT_FALSE(ParseProcStat(""));
  EXPECT_FALSE(ParseProcStat("Name:\tfoo\nPid:\t12\n"));
  EXPECT_FALSE(ParseProcStat("12 (foo) S 1 2 3"));           // cut before starttime
  std::string bad_pid = kStatOfInit;
  bad_pid.insert(0, "x");
  EXPECT_FALSE(ParseProcStat(bad_pid));
  std::string bad_ppid = kStatOfInit;
  bad_ppid.replace(bad_ppid.find(") S 0 "), 6, ") S one ");
  EXPECT_FALSE(ParseProcStat(bad_ppid));
  const std::string cut(kStatOfInit, std::string_view(kStatOfInit).find(" 19 "));
  EXPECT_FALSE(ParseProcStat(cut));  // ends before starttime
}

TEST(BootTimeTest, ReadsBtimeFromRecordedProcStat) {
  constexpr char kProcStat[] =
      "cpu  89442 0 24578 74563 832 0 285 0 0 0\n"
      "cpu0 43433 0 11677 39561 97 0 71 0 0 0\n"
      "intr 123 0 0\n"
      "ctxt 456\n"
      "btime 1795467662\n"
      "processes 10200\n";
  auto btime = ParseBootTime(kProcStat);
  ASSERT_TRUE(btime) << btime.error().message;
  EXPECT_EQ(*btime, 1795467662);
}

TEST(BootTimeTest, MissingOrMalformedBtimeIsAnError) {
  EXPECT_FALSE(ParseBootTime("cpu 1 2 3\nctxt 4\n"));
  EXPECT_FALSE(ParseBootTime("btime soon\n"));
  EXPECT_FALSE(ParseBootTime("xbtime 12\n"));
}

TEST(BootTimeTest, LiveBootTimeIsInThePast) {
  auto text = ReadTextFile("/proc/stat");
  ASSERT_TRUE(text);
  auto btime = ParseBootTime(*text);
  ASSERT_TRUE(btime) << btime.error().message;
  EXPECT_GT(*btime, 0);
  EXPECT_LE(*btime, ::time(nullptr));
}

TEST(BootTimeTest, StartTimeIsBootTimePlusTicks) {
  using std::chrono::system_clock;
  const auto boot = system_clock::time_point(std::chrono::seconds(1795467662));
  EXPECT_EQ(ProcessStartTime(1795467662, 95168, 100), boot + std::chrono::milliseconds(951680));
  EXPECT_EQ(ProcessStartTime(1795467662, 0, 100), boot);
  EXPECT_EQ(ProcessStartTime(1795467662, 3, 1000), boot + std::chrono::milliseconds(3));
}

TEST(ProcStatusTest, SplitsCmdline) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ParseCmdline(std::string("a\0b c\0", 6)), (V{"a", "b c"}));
  EXPECT_EQ(ParseCmdline("single"), (V{"single"}));
  EXPECT_TRUE(ParseCmdline("").empty());
}

TEST(ProcStatusTest, ReadTextFileMapsErrors) {
  auto missing = ReadTextFile("/nonexistent/memprof/file");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("/nonexistent/memprof/file"), std::string::npos);
}

}  // namespace
}  // namespace memprof
