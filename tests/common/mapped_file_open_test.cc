#include "common/mapped_file_open.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace memprof {
namespace {

// The first mapping of this test executable in /proc/self/maps.
MappedFileRef OwnExecutable() {
  std::ifstream maps("/proc/self/maps");
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string line;
  while (std::getline(maps, line)) {
    if (!line.ends_with(" " + exe)) continue;
    MappedFileRef ref;
    ref.path = exe;
    std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &ref.start, &ref.end);
    return ref;
  }
  return {};
}

TEST(MappedFileOpenTest, MapFilesPathIsTheKernelsSpelling) {
  EXPECT_EQ(MapFilesPath("/proc", 42, 0x7f0000001000, 0x7f0000002000),
            "/proc/42/map_files/7f0000001000-7f0000002000");
}

TEST(MappedFileOpenTest, ALiveProcessesFileIsReadThroughItsMappingWherePermitted) {
  const MappedFileRef exe = OwnExecutable();
  ASSERT_FALSE(exe.path.empty());
  // A root that does not have the file: only the mapping can serve.
  MappedFileSource source{"/proc", ::getpid(), "/nonexistent-root"};
  Result<OpenedMappedFile> opened = OpenMappedFile(exe, source);
  if (::geteuid() != 0) {
    ASSERT_FALSE(opened);
    EXPECT_NE(opened.error().message.find("(nor through /proc/"), std::string::npos)
        << opened.error().message;
    GTEST_SKIP() << "map_files is root's only";
  }
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_TRUE(opened->through_map_files);
  EXPECT_EQ(DescribeOpenedMappedFile(*opened),
            "through " + MapFilesPath("/proc", ::getpid(), exe.start, exe.end));
  char magic[4] = {};
  ASSERT_EQ(::pread(opened->fd.get(), magic, sizeof magic, 0), 4);
  EXPECT_EQ(std::string(magic, 4), "\x7f" "ELF");
}

TEST(MappedFileOpenTest, ByNameWhenTheMappingCannotBeReached) {
  test_support::TempDir proc;  // no <pid>/map_files in it
  test_support::TempDir root;
  std::ofstream(root.File("lib.so")) << "x";
  MappedFileSource source{proc.path(), 12, root.path()};
  Result<OpenedMappedFile> opened = OpenMappedFile({"/lib.so", 0x1000, 0x2000}, source);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_FALSE(opened->through_map_files);
  EXPECT_EQ(DescribeOpenedMappedFile(*opened), "by name, " + root.File("lib.so"));
}

TEST(MappedFileOpenTest, NeitherSaysBothWhatWasTriedAndWhy) {
  test_support::TempDir proc;
  MappedFileSource source{proc.path(), 12, "/nonexistent-root"};
  Result<OpenedMappedFile> opened = OpenMappedFile({"/lib.so", 0x10, 0x20}, source);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(opened.error().message,
            "cannot read /nonexistent-root/lib.so: No such file or directory (nor through " +
                proc.path() + "/12/map_files/10-20: No such file or directory)");
}

TEST(MappedFileOpenTest, ADeletedFileIsNeverReadByName) {
  test_support::TempDir root;
  std::ofstream(root.File("lib.so")) << "another file now";
  Result<OpenedMappedFile> opened =
      OpenMappedFile({"/lib.so", 0x10, 0x20, /*deleted=*/true}, {"/proc", std::nullopt, root.path()});
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().message, "/lib.so was deleted and cannot be read by name");
}

}  // namespace
}  // namespace memprof
