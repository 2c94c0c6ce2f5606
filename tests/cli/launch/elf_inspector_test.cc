#include "cli/launch/elf_inspector.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

TEST(ElfInspectorTest, DynamicProgramWithoutJemalloc) {
  auto info = InspectElf("/bin/true");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_TRUE(info->is_elf);
  EXPECT_TRUE(info->is_64bit);
  EXPECT_TRUE(info->has_interp);
  EXPECT_NE(std::find(info->needed.begin(), info->needed.end(), "libc.so.6"), info->needed.end());
  EXPECT_FALSE(info->UsesJemalloc());
}

TEST(ElfInspectorTest, ProgramLinkedAgainstJemalloc) {
  auto info = InspectElf(MEMPROF_TEST_JEMALLOC_PROBE);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_TRUE(info->has_interp);
  EXPECT_NE(std::find(info->needed.begin(), info->needed.end(), "libjemalloc.so.2"),
            info->needed.end());
  EXPECT_FALSE(info->defines_mallctl);
  EXPECT_TRUE(info->UsesJemalloc());
}

TEST(ElfInspectorTest, JemallocItselfDefinesMallctl) {
  auto info = InspectElf(MEMPROF_TEST_JEMALLOC_LIB);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_TRUE(info->defines_mallctl);
  EXPECT_TRUE(info->UsesJemalloc());
}

TEST(ElfInspectorTest, StaticProgramHasNoInterpreter) {
  auto info = InspectElf(MEMPROF_TEST_STATIC_PROBE);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_TRUE(info->is_elf);
  EXPECT_FALSE(info->has_interp);
  EXPECT_TRUE(info->needed.empty());
}

TEST(ElfInspectorTest, ScriptIsNotElfButNotAnError) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("s.sh"), "#!/bin/sh\necho hi\n");
  auto info = InspectElf(dir.File("s.sh"));
  ASSERT_TRUE(info);
  EXPECT_FALSE(info->is_elf);
}

TEST(ElfInspectorTest, MissingFileIsNotFound) {
  auto info = InspectElf("/no/such/program");
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ErrorCode::kNotFound);
}

TEST(ElfInspectorTest, UsesJemallocMatchesAnyLibjemallocSoname) {
  ElfInfo info;
  info.needed = {"libc.so.6", "libjemalloc.so.1"};
  EXPECT_TRUE(info.UsesJemalloc());
  info.needed = {"libc.so.6", "libtcmalloc.so.4"};
  EXPECT_FALSE(info.UsesJemalloc());
}

}  // namespace
}  // namespace memprof::cli
