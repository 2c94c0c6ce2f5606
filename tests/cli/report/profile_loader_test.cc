#include "cli/report/profile_loader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace memprof::report {
namespace {

constexpr const char* kDump =
    "heap_v2/524288\n"
    "  t*: 1: 64 [0: 0]\n"
    "@ 0x1 0x2\n"
    "  t*: 1: 64 [0: 0]\n"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "55d0a0000000-55d0a0001000 r-xp 00000000 08:01 42 /usr/bin/demo\r\n"
    "\n"
    "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
    "7fff00000000-7fff00001000 r-xp 00000000 00:00 0 [vdso]\n";

std::string Write(const test_support::TempDir& dir, const std::string& text) {
  const std::string path = dir.File("dump.heap");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// What the parser keeps of the maps section, line for line: '\r' dropped,
// empty lines kept. (A last line without '\n' is a cut dump, refused.)
TEST(PeekMappedLibrariesTest, SameLinesAsTheParser) {
  test_support::TempDir dir;
  const std::string path = Write(dir, kDump);
  auto profile = LoadProfile(path);
  ASSERT_TRUE(profile.has_value()) << profile.error().message;
  EXPECT_EQ(PeekMappedLibraries(path), profile->mapped_libraries);
  EXPECT_EQ(PeekMappedLibraries(path).size(), 4u);
}

// A maps section longer than the first, small read (a process with
// thousands of mappings) is read whole by the second; one beyond the last
// MiB is not peeked at all (the parser's own maps are used then).
TEST(PeekMappedLibrariesTest, ALongMapsSectionIsReadWhole) {
  test_support::TempDir dir;
  std::string dump = kDump;
  std::string more;
  for (int i = 0; i < 2000; ++i) {
    more += "7e" + std::to_string(100000 + i) + "000-7e" + std::to_string(100000 + i) +
            "fff r-xp 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libmany" + std::to_string(i) +
            ".so\n";
  }
  ASSERT_GT(more.size(), size_t{64} << 10);
  const std::string path = Write(dir, dump + more);
  auto profile = LoadProfile(path);
  ASSERT_TRUE(profile.has_value()) << profile.error().message;
  EXPECT_EQ(PeekMappedLibraries(path), profile->mapped_libraries);
  EXPECT_EQ(PeekMappedLibraries(path).size(), 4u + 2000u);

  while (more.size() <= size_t{1} << 20) more += more;
  EXPECT_TRUE(PeekMappedLibraries(Write(dir, dump + more)).empty());
}

TEST(PeekMappedLibrariesTest, NothingWithoutAMapsSection) {
  test_support::TempDir dir;
  EXPECT_TRUE(PeekMappedLibraries(Write(dir, "heap_v2/1\n  t*: 0: 0 [0: 0]\n")).empty());
  EXPECT_TRUE(PeekMappedLibraries(dir.File("absent.heap")).empty());
}

}  // namespace
}  // namespace memprof::report
