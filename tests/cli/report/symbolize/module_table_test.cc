#include "cli/report/symbolize/module_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memprof::report::symbolize {
namespace {

std::vector<MemoryMapping> Parse(const std::vector<std::string>& lines) {
  return ParseMemoryMap(lines).mappings;
}

TEST(ModuleTableTest, GroupsMappingsOfOneLoadedFile) {
  // Unsorted on purpose; the anonymous .bss mapping does not split libc.
  ModuleTable table(Parse({
      "7f0000004000-7f0000005000 rw-p 00003000 08:02 7 /lib/libc.so.6",
      "7f0000000000-7f0000001000 r--p 00000000 08:02 7 /lib/libc.so.6",
      "7f0000001000-7f0000003000 r-xp 00001000 08:02 7 /lib/libc.so.6",
      "7f0000005000-7f0000006000 rw-p 00000000 00:00 0",
      "7f0000003000-7f0000004000 r--p 00002000 08:02 7 /lib/libc.so.6",
      "7f0000006000-7f0000007000 r-xp 00000000 00:00 0 [vdso]",
  }));
  ASSERT_EQ(table.instances().size(), 1u);
  const MemoryMapping& bias = table.mappings()[table.instances()[0].bias_mapping];
  EXPECT_EQ(bias.perms, "r-xp");  // return addresses are there
  const MemoryMapping* data = table.FindMapping(0x7f0000004010);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(table.InstanceOf(*data), 0u);
  const MemoryMapping* bss = table.FindMapping(0x7f0000005000);
  ASSERT_NE(bss, nullptr);
  EXPECT_FALSE(table.InstanceOf(*bss).has_value());
  EXPECT_FALSE(table.InstanceOf(*table.FindMapping(0x7f0000006000)).has_value());
}

TEST(ModuleTableTest, SameFileLoadedTwiceIsTwoInstances) {
  ModuleTable table(Parse({
      "1000-2000 r-xp 00000000 08:02 7 /lib/plugin.so",
      "2000-3000 rw-p 00001000 08:02 7 /lib/plugin.so",
      "5000-6000 r-xp 00000000 08:02 7 /lib/plugin.so",
      "6000-7000 rw-p 00001000 08:02 7 /lib/plugin.so",
      "8000-9000 r-xp 00000000 08:02 8 /lib/plugin.so",  // replaced file: other inode
  }));
  EXPECT_EQ(table.instances().size(), 3u);
}

TEST(ModuleTableTest, FindMappingBoundaries) {
  ModuleTable table(
      Parse({"1000-2000 r-xp 00000000 08:02 7 /bin/a", "3000-4000 r-xp 00000000 08:02 8 /bin/b"}));
  EXPECT_EQ(table.FindMapping(0xfff), nullptr);
  ASSERT_NE(table.FindMapping(0x1000), nullptr);
  EXPECT_EQ(table.FindMapping(0x1fff)->path, "/bin/a");
  EXPECT_EQ(table.FindMapping(0x2000), nullptr);
  EXPECT_EQ(table.FindMapping(0x3abc)->path, "/bin/b");
  EXPECT_EQ(table.FindMapping(0x4000), nullptr);
  EXPECT_EQ(ModuleTable({}).FindMapping(0x1000), nullptr);
}

}  // namespace
}  // namespace memprof::report::symbolize
