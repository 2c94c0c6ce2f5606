#include "cli/report/pprof/gzip_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>

#include "common/chunk_writer.h"
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

// Compressible text (so deflate's choices matter) cut into pieces of every
// size and written through a ChunkWriter into a GzipStreamBuffer, as the
// pprof writer does: byte for byte what one GzipWriter makes of the whole,
// whatever the cuts.
TEST(GzipStreamBufferTest, ThroughAChunkWriterWritesWhatOneWriterWrites) {
  std::mt19937 random(7);
  std::string input;
  while (input.size() < 400000) input += "frame " + std::to_string(random() % 5000) + "\n";
  std::ostringstream whole;
  GzipWriter gzip(whole);
  ASSERT_TRUE(gzip.Write(Bytes(input)).has_value());
  ASSERT_TRUE(gzip.Finish().has_value());
  for (size_t most : {size_t{7}, size_t{100}, size_t{70000}, size_t{3000000}}) {
    std::ostringstream out;
    GzipWriter pieces(out);
    GzipStreamBuffer buffer(pieces);
    std::ostream stream(&buffer);
    {
      ChunkWriter writer(stream);
      for (size_t at = 0; at < input.size();) {
        const size_t size = std::min(input.size() - at, 1 + random() % most);
        writer.Write(input.substr(at, size));
        at += size;
      }
    }
    stream.put('!');  // one byte on its own (overflow), then the trailer
    ASSERT_TRUE(buffer.result().has_value());
    ASSERT_TRUE(pieces.Finish().has_value());
    EXPECT_EQ(testing::Gunzip(out.str()), input + "!") << "pieces of at most " << most;
    if (most == 3000000) continue;
    std::ostringstream again;
    GzipWriter one(again);
    ASSERT_TRUE(one.Write(Bytes(input + "!")).has_value());
    ASSERT_TRUE(one.Finish().has_value());
    EXPECT_TRUE(out.str() == again.str()) << "pieces of at most " << most;
  }
}

// The compressed stream's failure is kept, and the stream goes bad.
TEST(GzipStreamBufferTest, AFailingStreamIsKeptAndTheStreamGoesBad) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  GzipWriter gzip(out);
  GzipStreamBuffer buffer(gzip);
  std::ostream stream(&buffer);
  stream << std::string(200000, 'x');
  ASSERT_FALSE(buffer.result().has_value());
  EXPECT_EQ(buffer.result().error().code, ErrorCode::kInternal);
  EXPECT_TRUE(stream.bad());
}

}  // namespace
}  // namespace memprof::report::pprof
