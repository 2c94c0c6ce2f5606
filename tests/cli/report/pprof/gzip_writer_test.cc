#include "cli/report/pprof/gzip_writer.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>

#include "tests/cli/report/pprof/test_support.h"

namespace memprof::report::pprof {
namespace {

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

TEST(GzipWriterTest, WritesOneGzipMemberThatInflatesToTheInput) {
  // Incompressible data larger than the output buffer, written in pieces,
  // makes deflate fill and drain its buffer many times.
  std::mt19937 random(42);
  std::string input;
  for (int i = 0; i < 300000; ++i) input.push_back(static_cast<char>(random()));
  std::ostringstream out;
  GzipWriter gzip(out);
  ASSERT_TRUE(gzip.Write(Bytes(input.substr(0, 1000))).has_value());
  ASSERT_TRUE(gzip.Write(Bytes(input.substr(1000))).has_value());
  ASSERT_TRUE(gzip.Finish().has_value());
  std::string written = out.str();
  ASSERT_GE(written.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(written[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(written[1]), 0x8b);
  EXPECT_EQ(testing::Gunzip(written), input);
}

TEST(GzipWriterTest, EmptyInputIsStillAValidMember) {
  std::ostringstream out;
  GzipWriter gzip(out);
  ASSERT_TRUE(gzip.Finish().has_value());
  EXPECT_FALSE(out.str().empty());
  EXPECT_EQ(testing::Gunzip(out.str()), "");
}

TEST(GzipWriterTest, AFailingStreamIsAnError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  GzipWriter gzip(out);
  Result<void> written = gzip.Write(Bytes("hello"));
  Result<void> finished = written ? gzip.Finish() : written;
  ASSERT_FALSE(finished.has_value());
  EXPECT_EQ(finished.error().code, ErrorCode::kInternal);
}

TEST(GzipWriterTest, WriteAfterFinishFails) {
  std::ostringstream out;
  GzipWriter gzip(out);
  ASSERT_TRUE(gzip.Finish().has_value());
  EXPECT_FALSE(gzip.Write(Bytes("late")).has_value());
}

}  // namespace
}  // namespace memprof::report::pprof
