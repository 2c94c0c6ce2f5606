#include "common/proc_status.h"

#include <unistd.h>

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
