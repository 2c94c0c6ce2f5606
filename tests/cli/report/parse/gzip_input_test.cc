// A dump piped through gzip (as the user guide shows) reads like the plain
// one; a gzip bomb, a cut or a corrupt gzip file is one clear error.
#include "cli/report/parse/gzip_input.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cli/report/parse/heap_dump_reader.h"
#include "tests/cli/report/parse/test_util.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::parse {
namespace {

using testing::DataPath;
using testing::ReadFile;

std::string Gzip(const std::string& text) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

class GzipInputTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& data) {
    const std::string path = dir_.File(name);
    EXPECT_TRUE(test_support::WriteFile(path, data));
    return path;
  }
  test_support::TempDir dir_ = std::move(*test_support::TempDir::Create("memprof-gzip"));
  std::string plain_ = ReadFile(DataPath("many_stacks_sampled.heap"));
};

TEST_F(GzipInputTest, AGzippedDumpParsesLikeThePlainOne) {
  auto plain = ParseHeapDumpFile(DataPath("many_stacks_sampled.heap"));
  auto gzipped = ParseHeapDumpFile(Write("d.heap.gz", Gzip(plain_)));
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  ASSERT_TRUE(gzipped.has_value()) << gzipped.error().message;
  EXPECT_EQ(gzipped->records.size(), plain->records.size());
  EXPECT_EQ(gzipped->mapped_libraries, plain->mapped_libraries);
  EXPECT_EQ(gzipped->totals.inuse.bytes, plain->totals.inuse.bytes);
}

// Each stack goes to the observer as the parser meets it, in the order of
// the records, whether the file is read through a buffer or inflated first.
TEST_F(GzipInputTest, TheObserverSeesEveryStackInOrder) {
  for (const std::string& path :
       {DataPath("many_stacks_sampled.heap"), Write("d.heap.gz", Gzip(plain_))}) {
    SCOPED_TRACE(path);
    std::vector<std::vector<uint64_t>> seen;
    auto dump = ParseHeapDumpFile(path, {}, [&seen](std::span<const uint64_t> stack) {
      seen.emplace_back(stack.begin(), stack.end());
    });
    ASSERT_TRUE(dump.has_value()) << dump.error().message;
    ASSERT_EQ(seen.size(), dump->records.size());
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], dump->records[i].stack);
  }
}

TEST_F(GzipInputTest, ConcatenatedMembersAreOneInput) {
  const size_t half = plain_.size() / 2;
  auto dump = ParseHeapDumpFile(
      Write("d.heap.gz", Gzip(plain_.substr(0, half)) + Gzip(plain_.substr(half))));
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_FALSE(dump->mapped_libraries.empty());
}

TEST_F(GzipInputTest, AGzipBombStopsAtTheLimit) {
  ParseLimits limits;
  limits.max_gunzipped_bytes = 4096;
  const std::string path = Write("bomb.gz", Gzip(std::string(1 << 20, '\n')));
  auto dump = ParseHeapDumpFile(path, limits);
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(dump.error().message,
            path + ": gzip'd dump inflates to more than 4096 bytes (the parser's limit; a gzip "
                   "bomb?)");
}

TEST_F(GzipInputTest, ACutGzipFileSaysWhereItEnds) {
  const std::string gzipped = Gzip(plain_);
  const std::string path = Write("cut.gz", gzipped.substr(0, gzipped.size() / 2));
  auto dump = ParseHeapDumpFile(path);
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(dump.error().message, path + ": gzip'd dump is cut short: truncated at byte " +
                                      std::to_string(gzipped.size() / 2) +
                                      " of its compressed data");
}

TEST_F(GzipInputTest, CorruptDataIsNotAValidGzipFile) {
  std::string gzipped = Gzip(plain_);
  for (size_t i = 20; i < 60; ++i) gzipped[i] = static_cast<char>(0xff);
  const std::string path = Write("bad.gz", gzipped);
  auto dump = ParseHeapDumpFile(path);
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(dump.error().message.starts_with(path + ": not a valid gzip file: "))
      << dump.error().message;
}

}  // namespace
}  // namespace memprof::report::parse
