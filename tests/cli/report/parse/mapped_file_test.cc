#include "cli/report/parse/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace memprof::report::parse {
namespace {

TEST(MappedFileTest, AnEmptyFileMapsToNothing) {
  test_support::TempDir dir;
  const std::string path = dir.File("empty.heap");
  std::ofstream(path).close();
  Result<MappedFile> file = MappedFile::Open(path);
  ASSERT_TRUE(file.has_value());
  EXPECT_TRUE(file->text().empty());
}

}  // namespace
}  // namespace memprof::report::parse
