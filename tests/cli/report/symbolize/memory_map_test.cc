#include "cli/report/symbolize/memory_map.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memprof::report::symbolize {
namespace {

TEST(MemoryMapTest, ParsesAFileMapping) {
  auto m = ParseMemoryMapLine(
      "7f1c2a400000-7f1c2a428000 r-xp 00028000 fd:01 1049088                    "
      "/usr/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->start, 0x7f1c2a400000u);
  EXPECT_EQ(m->end, 0x7f1c2a428000u);
  EXPECT_EQ(m->offset, 0x28000u);
  EXPECT_EQ(m->perms, "r-xp");
  EXPECT_EQ(m->inode, 1049088u);
  EXPECT_EQ(m->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_FALSE(m->deleted);
  EXPECT_TRUE(m->Executable());
  EXPECT_TRUE(m->FileBacked());
  EXPECT_EQ(m->Basename(), "libc.so.6");
}

TEST(MemoryMapTest, KeepsSpacesInsidePaths) {
  auto m = ParseMemoryMapLine("1000-2000 r-xp 00000000 08:02 42   /opt/my app/bin/my  server");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->path, "/opt/my app/bin/my  server");
  EXPECT_EQ(m->Basename(), "my  server");
}

TEST(MemoryMapTest, StripsDeletedSuffix) {
  auto m = ParseMemoryMapLine("1000-2000 r-xp 00001000 08:02 42 /tmp/old binary (deleted)");
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->deleted);
  EXPECT_EQ(m->path, "/tmp/old binary");
}

TEST(MemoryMapTest, AnonymousAndPseudoMappings) {
  auto anon = ParseMemoryMapLine("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ");
  ASSERT_TRUE(anon.has_value());
  EXPECT_EQ(anon->path, "");
  EXPECT_FALSE(anon->FileBacked());
  auto bare = ParseMemoryMapLine("7ffd1000-7ffd2000 rw-p 00000000 00:00 0");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->path, "");
  auto vdso = ParseMemoryMapLine("7ffd3000-7ffd5000 r-xp 00000000 00:00 0   [vdso]");
  ASSERT_TRUE(vdso.has_value());
  EXPECT_EQ(vdso->path, "[vdso]");
  EXPECT_FALSE(vdso->FileBacked());
  auto stack = ParseMemoryMapLine("7ffc0000-7ffc2000 rw-p 00000000 00:00 0   [stack]");
  ASSERT_TRUE(stack.has_value());
  EXPECT_EQ(stack->path, "[stack]");
}

TEST(MemoryMapTest, AcceptsLineTerminatorsAndSharedMappings) {
  auto m = ParseMemoryMapLine("1000-2000 r--s 00000000 00:05 7 /memfd:x\r\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->path, "/memfd:x");
  EXPECT_FALSE(m->Executable());
}

TEST(MemoryMapTest, RejectsMalformedLines) {
  for (const char* line : {
           "", "garbage",
           "1000 r-xp 00000000 08:02 42 /bin/x",                // no range
           "1000-zz r-xp 00000000 08:02 42 /bin/x",             // bad hex
           "2000-1000 r-xp 00000000 08:02 42 /bin/x",           // start > end
           "1000-1000 r-xp 00000000 08:02 42 /bin/x",           // empty
           "1000-2000 rwxq 00000000 08:02 42 /bin/x",           // bad perms
           "1000-2000 r-x 00000000 08:02 42 /bin/x",            // short perms
           "1000-2000 r-xp 0000g000 08:02 42 /bin/x",           // bad offset
           "1000-2000 r-xp 00000000 0802 42 /bin/x",            // bad device
           "1000-2000 r-xp 00000000 08:02 4x2 /bin/x",          // bad inode
           "1000-2000 r-xp 00000000 08:02",                     // truncated
           "-1000-2000 r-xp 00000000 08:02 42 /bin/x",          // sign
           "10000000000000000-10000000000000001 r-xp 0 0:0 0",  // overflow
       }) {
    EXPECT_FALSE(ParseMemoryMapLine(line).has_value()) << line;
  }
}

TEST(MemoryMapTest, ParseManySkipsAndCountsMalformedLines) {
  const std::vector<std::string> lines = {
      "1000-2000 r-xp 00000000 08:02 42 /bin/x",
      "not a maps line",
      "",
      "   ",
      "3000-4000 rw-p 00000000 00:00 0",
      "5000-4000 rw-p 00000000 00:00 0",
  };
  ParsedMemoryMap parsed = ParseMemoryMap(lines);
  ASSERT_EQ(parsed.mappings.size(), 2u);
  EXPECT_EQ(parsed.mappings[0].path, "/bin/x");
  EXPECT_EQ(parsed.mappings[1].start, 0x3000u);
  EXPECT_EQ(parsed.skipped, 2u);
}

}  // namespace
}  // namespace memprof::report::symbolize
