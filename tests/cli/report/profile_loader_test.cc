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

TEST(PeekMappedLibrariesTest, NothingWithoutAMapsSection) {
  test_support::TempDir dir;
  EXPECT_TRUE(PeekMappedLibraries(Write(dir, "heap_v2/1\n  t*: 0: 0 [0: 0]\n")).empty());
  EXPECT_TRUE(PeekMappedLibraries(dir.File("absent.heap")).empty());
}

}  // namespace
}  // namespace memprof::report
