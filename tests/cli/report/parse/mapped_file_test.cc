#include "cli/report/parse/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace memprof::report::parse {
namespace {

// This process's resident pages of mapped files, in KiB.
long RssFileKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("RssFile:")) return std::stol(line.substr(8));
  }
  return -1;
}

// Read from start to end with ReadingAt, a 64 MiB file never has more than
// a few windows of itself resident, and every byte reads as written.
TEST(MappedFileTest, ReadingThroughKeepsOnlyAWindowResident) {
  test_support::TempDir dir;
  const std::string path = dir.File("big.heap");
  constexpr size_t kSize = size_t{64} << 20;
  {
    std::ofstream out(path, std::ios::binary);
    std::string block(1 << 20, '\0');
    for (size_t i = 0; i < kSize; i += block.size()) {
      for (size_t j = 0; j < block.size(); ++j) block[j] = static_cast<char>((i + j) % 251);
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  const long before = RssFileKib();
  Result<MappedFile> file = MappedFile::Open(path);
  ASSERT_TRUE(file.has_value()) << file.error().message;
  ASSERT_EQ(file->text().size(), kSize);
  long peak = 0;
  uint64_t mismatches = 0;
  for (size_t i = 0; i < kSize; ++i) {
    if (i % (1 << 20) == 0) {
      file->ReadingAt(i);
      peak = std::max(peak, RssFileKib() - before);
    }
    if (static_cast<unsigned char>(file->text()[i]) != i % 251) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_LT(peak, 16 * 1024) << "KiB of the file resident at once";
}

TEST(MappedFileTest, AnEmptyFileMapsToNothing) {
  test_support::TempDir dir;
  const std::string path = dir.File("empty.heap");
  std::ofstream(path).close();
  Result<MappedFile> file = MappedFile::Open(path);
  ASSERT_TRUE(file.has_value());
  EXPECT_TRUE(file->text().empty());
  file->ReadingAt(0);
}

}  // namespace
}  // namespace memprof::report::parse
