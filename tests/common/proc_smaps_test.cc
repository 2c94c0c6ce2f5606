#include "common/proc_smaps.h"

#include <gtest/gtest.h>

#include <string>

#include "common/text_file.h"

namespace memprof {
namespace {

std::string Fixture(const char* name) {
  auto text = ReadTextFile(std::string(MEMPROF_TEST_DATA_DIR) + "/doctor/proc/4242/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : std::string();
}

// Recorded from plain_target (jemalloc preloaded with the agent, 12 threads).
TEST(ProcSmapsTest, ParsesRecordedJemallocProcess) {
  auto mappings = ParseSmaps(Fixture("smaps"));
  ASSERT_TRUE(mappings) << mappings.error().message;
  ASSERT_EQ(mappings->size(), 350u);
  const SmapsMapping& first = mappings->front();
  EXPECT_EQ(first.start, 0x55a424196000u);
  EXPECT_EQ(first.end, 0x55a424197000u);
  EXPECT_EQ(first.perms, "r--p");
  EXPECT_EQ(first.path, "/work/main/build/tests/testprogs/plain_target");
  EXPECT_EQ(first.rss_bytes, 4096u);
}

TEST(ProcSmapsTest, BreaksRecordedProcessDownIntoKindsThatAddUp) {
  auto mappings = ParseSmaps(Fixture("smaps"));
  ASSERT_TRUE(mappings);
  const SmapsBreakdown b = BreakDownSmaps(*mappings, 2);
  EXPECT_EQ(b.rss_bytes, 26583040u);
  EXPECT_EQ(b.thread_stacks, 12u);
  EXPECT_EQ(b.thread_stacks_bytes, 188416u);
  EXPECT_EQ(b.binaries_bytes, 17694720u);
  EXPECT_EQ(b.other_files_bytes, 0u);
  EXPECT_EQ(b.shared_memory_bytes, 0u);
  EXPECT_EQ(b.anonymous_bytes, 8699904u);
  EXPECT_EQ(b.thread_stacks_bytes + b.binaries_bytes + b.other_files_bytes + b.shared_memory_bytes +
                b.anonymous_bytes,
            b.rss_bytes);
  ASSERT_EQ(b.top_anonymous.size(), 2u);
  EXPECT_EQ(b.top_anonymous[0].start, 0x7fa3c7080000u);
  EXPECT_EQ(b.top_anonymous[0].rss_bytes, 5234688u);
  EXPECT_EQ(b.top_anonymous[1].rss_bytes, 2646016u);
}

TEST(ProcSmapsTest, ReadsRolledUpRss) {
  auto rss = ParseSmapsRollupRss(Fixture("smaps_rollup"));
  ASSERT_TRUE(rss) << rss.error().message;
  EXPECT_EQ(*rss, 26028u * 1024);
  EXPECT_FALSE(ParseSmapsRollupRss("Pss: 12 kB\n"));
}

TEST(ProcSmapsTest, RejectsTextThatIsNotSmaps) {
  EXPECT_FALSE(ParseSmaps("Rss: 4 kB\n"));
  EXPECT_FALSE(ParseSmaps("zzzz nonsense\n"));
  EXPECT_FALSE(ParseSmaps("1000-zz rw-p 0 0 0\n"));
}

SmapsMapping Map(uint64_t start, uint64_t end, const char* perms, const char* path = "",
                 uint64_t rss = 0) {
  SmapsMapping m;
  m.start = start;
  m.end = end;
  m.perms = perms;
  m.path = path;
  m.rss_bytes = rss;
  return m;
}

// The guard must be adjacent, anonymous, PROT_NONE and at most 64 KiB.
TEST(ProcSmapsTest, ThreadStackNeedsAnAdjacentSmallGuardBelow) {
  const std::vector<SmapsMapping> mappings = {
      Map(0x10000, 0x11000, "---p"),                   // guard
      Map(0x11000, 0x91000, "rw-p"),                   // 0: stack
      Map(0xa0000, 0xb0000, "---p"),                   // 64 KiB guard (the limit)
      Map(0xb0000, 0xc0000, "rw-p"),                   // 1: stack
      Map(0xc0000, 0xd1000, "---p"),                   // 68 KiB: not a guard
      Map(0xd1000, 0xe0000, "rw-p"),                   // not a stack
      Map(0xf0000, 0xf1000, "---p"),                   // guard with a gap above it
      Map(0xf2000, 0xf3000, "rw-p"),                   // not a stack
      Map(0x100000, 0x101000, "---p", "/lib/x.so"),    // a file, not a guard
      Map(0x101000, 0x102000, "rw-p"),                 // not a stack
      Map(0x7ff00000, 0x7ff10000, "rw-p", "[stack]"),  // 2: the main thread's
  };
  EXPECT_EQ(ThreadStackIndexes(mappings), (std::vector<size_t>{1, 3, 10}));
}

TEST(ProcSmapsTest, SortsSharedMemoryFilesAndAnonymousApart) {
  const std::vector<SmapsMapping> mappings = {
      Map(0x1000, 0x2000, "r-xp", "/usr/bin/app", 10),
      Map(0x2000, 0x3000, "rw-p", "/usr/bin/app", 20),  // data of an executable: binaries
      Map(0x3000, 0x4000, "r--p", "/var/data.db", 40),
      Map(0x4000, 0x5000, "rw-s", "/dev/shm/ring", 80),
      Map(0x5000, 0x6000, "rw-s", "/dev/zero (deleted)", 160),
      Map(0x6000, 0x7000, "rw-s", "/var/shared.map", 320),  // a shared file: a file
      Map(0x7000, 0x8000, "rw-p", "[heap]", 640),
      Map(0x8000, 0x9000, "r--p", "[vdso]", 1280),
  };
  const SmapsBreakdown b = BreakDownSmaps(mappings, 5);
  EXPECT_EQ(b.binaries_bytes, 10u + 20 + 1280);
  EXPECT_EQ(b.other_files_bytes, 40u + 320);
  EXPECT_EQ(b.shared_memory_bytes, 80u + 160);
  EXPECT_EQ(b.anonymous_bytes, 640u);
  EXPECT_EQ(b.rss_bytes, 2550u);
  ASSERT_EQ(b.top_anonymous.size(), 1u);
  EXPECT_EQ(b.top_anonymous[0].path, "[heap]");
}

}  // namespace
}  // namespace memprof
