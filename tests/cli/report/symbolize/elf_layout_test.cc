#include "cli/report/symbolize/elf_layout.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "common/fd.h"
#include "tests/support/command_runner.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::symbolize {
namespace {

MemoryMapping Mapping(uint64_t start, uint64_t end, uint64_t offset, const char* perms) {
  MemoryMapping m;
  m.start = start;
  m.end = end;
  m.offset = offset;
  m.perms = perms;
  m.path = "/lib/x.so";
  return m;
}

// GNU ld's layout of a PIE / shared library with -z separate-code.
const std::vector<LoadSegment> kPie = {
    {0x0, 0x0, 0x5a0, false},
    {0x1000, 0x1000, 0x2d5, true},
    {0x2000, 0x2000, 0x1bc, false},
    {0x3de8, 0x2de8, 0x260, false},
};

TEST(LoadBiasTest, PieFromAnyOfItsMappings) {
  const uint64_t base = 0x55d0c9a00000;
  EXPECT_EQ(LoadBias(kPie, Mapping(base, base + 0x1000, 0, "r--p")), base);
  EXPECT_EQ(LoadBias(kPie, Mapping(base + 0x1000, base + 0x2000, 0x1000, "r-xp")), base);
  EXPECT_EQ(LoadBias(kPie, Mapping(base + 0x2000, base + 0x3000, 0x2000, "r--p")), base);
  // The data segment's p_vaddr and p_offset differ by a page: still exact.
  EXPECT_EQ(LoadBias(kPie, Mapping(base + 0x4000, base + 0x5000, 0x3000, "rw-p")), base);
}

TEST(LoadBiasTest, SharedFilePageIsAmbiguousOutsideText) {
  // Offset 0x2000 starts both the rodata mapping and the RELRO part of the
  // data segment (both r--p after relocation): the first segment wins. The
  // Symbolizer therefore computes biases from executable mappings only.
  const uint64_t base = 0x55d0c9a00000;
  EXPECT_EQ(LoadBias(kPie, Mapping(base + 0x3000, base + 0x4000, 0x2000, "r--p")), base + 0x1000);
}

TEST(LoadBiasTest, ExecutableWithoutBias) {
  const std::vector<LoadSegment> exec = {{0x400000, 0, 0x1000, false},
                                         {0x401000, 0x1000, 0x5000, true}};
  EXPECT_EQ(LoadBias(exec, Mapping(0x401000, 0x406000, 0x1000, "r-xp")), 0u);
}

TEST(LoadBiasTest, OldLayoutWhereTextStartsTheFile) {
  // Without separate-code, text is the first segment and data shares its
  // last file page; the executable mapping must pick the text segment.
  const std::vector<LoadSegment> old = {{0x0, 0x0, 0x1234, true}, {0x201e00, 0x1e00, 0x300, false}};
  const uint64_t base = 0x7f0000000000;
  EXPECT_EQ(LoadBias(old, Mapping(base, base + 0x2000, 0, "r-xp")), base);
  EXPECT_EQ(LoadBias(old, Mapping(base + 0x201000, base + 0x202000, 0x1000, "rw-p")), base);
}

TEST(LoadBiasTest, NoSegmentAtThatOffsetIsNotThisFile) {
  EXPECT_FALSE(LoadBias(kPie, Mapping(0x1000, 0x2000, 0x900000, "r-xp")).has_value());
  EXPECT_FALSE(LoadBias({}, Mapping(0x1000, 0x2000, 0, "r-xp")).has_value());
}

TEST(ElfLayoutTest, ReadsTheFixtureSegments) {
  Fd fd(::open(MEMPROF_SYMBOLIZE_FIXTURE, O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  auto segments = ReadLoadSegments(fd.get());
  ASSERT_TRUE(segments.has_value()) << segments.error().message;
  ASSERT_FALSE(segments->empty());
  bool any_executable = false;
  for (const LoadSegment& s : *segments) any_executable = any_executable || s.executable;
  EXPECT_TRUE(any_executable);
}

TEST(ElfLayoutTest, RejectsNonElf) {
  Fd fd(::open(MEMPROF_SYMBOLIZE_FIXTURE_SOURCE, O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  auto segments = ReadLoadSegments(fd.get());
  ASSERT_FALSE(segments.has_value());
  EXPECT_EQ(segments.error().code, ErrorCode::kFailedPrecondition);
}

TEST(BuildIdTest, MatchesReadelf) {
  auto id = BuildId(MEMPROF_SYMBOLIZE_FIXTURE);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  const test_support::CommandResult readelf =
      test_support::RunCommand({MEMPROF_READELF, "-n", MEMPROF_SYMBOLIZE_FIXTURE}, {});
  ASSERT_EQ(readelf.exit_code, 0);
  EXPECT_NE(readelf.out.find("Build ID: " + *id), std::string::npos) << readelf;
  EXPECT_EQ(id->size(), 40u);  // GNU ld's default: SHA-1
}

TEST(BuildIdTest, Errors) {
  auto missing = BuildId("/nonexistent/memprof/binary");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto not_elf = BuildId(MEMPROF_SYMBOLIZE_FIXTURE_SOURCE);
  ASSERT_FALSE(not_elf.has_value());
  EXPECT_EQ(not_elf.error().code, ErrorCode::kFailedPrecondition);
}

TEST(BuildIdTest, ElfWithoutBuildId) {
  test_support::TempDir dir;
  const std::string copy = dir.File("no-build-id");
  ASSERT_EQ(test_support::RunCommand({MEMPROF_OBJCOPY, "--remove-section=.note.gnu.build-id",
                                      MEMPROF_SYMBOLIZE_FIXTURE, copy},
                                     {})
                .exit_code,
            0);
  auto id = BuildId(copy);
  ASSERT_FALSE(id.has_value());
  EXPECT_EQ(id.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace memprof::report::symbolize
