#include "cli/client/dump_receiver.h"

#include <gtest/gtest.h>

#include "tests/cli/testing/fake_profile_client.h"

namespace memprof::cli {
namespace {

using memprof::v1::DumpChunk;
using testing::MakeDumpStream;

class DumpReceiverTest : public ::testing::Test {
 protected:
  DumpReceiver receiver_{[this](std::string_view data) -> Result<void> {
    written_.append(data);
    return {};
  }};
  std::string written_;

  Result<void> Feed(const std::vector<DumpChunk>& chunks) {
    for (const DumpChunk& chunk : chunks) {
      if (auto ok = receiver_.OnChunk(chunk); !ok) return ok;
    }
    return {};
  }
};

TEST_F(DumpReceiverTest, AcceptsAWellFormedStream) {
  const std::string data(10000, 'x');
  ASSERT_TRUE(Feed(MakeDumpStream(data, 4096, 77)));
  auto summary = receiver_.Finish();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(written_, data);
  EXPECT_EQ(summary->size_bytes, 10000u);
  EXPECT_EQ(summary->sha256_hex.size(), 64u);
  EXPECT_EQ(summary->pid, 77);
  EXPECT_EQ(summary->sample_interval_bytes, 524288u);
  EXPECT_EQ(summary->created_unix_ms, 1700000000000);
}

TEST_F(DumpReceiverTest, EmptyProfileIsValid) {
  ASSERT_TRUE(Feed(MakeDumpStream("", 4096)));
  auto summary = receiver_.Finish();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->sha256_hex,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_F(DumpReceiverTest, ChecksumMismatchIsDataLoss) {
  auto chunks = MakeDumpStream("abcdef", 2);
  chunks.back().mutable_trailer()->set_sha256_hex(std::string(64, '0'));
  ASSERT_TRUE(Feed(chunks));
  auto summary = receiver_.Finish();
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(summary.error().message.find("checksum"), std::string::npos);
}

TEST_F(DumpReceiverTest, TrailerSizeMismatchIsDataLoss) {
  auto chunks = MakeDumpStream("abcdef", 2);
  chunks.back().mutable_trailer()->set_size_bytes(5);
  ASSERT_TRUE(Feed(chunks));
  auto summary = receiver_.Finish();
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(summary.error().message.find("size"), std::string::npos);
}

TEST_F(DumpReceiverTest, StreamWithoutTrailerIsDataLoss) {
  auto chunks = MakeDumpStream("abcdef", 2);
  chunks.pop_back();
  ASSERT_TRUE(Feed(chunks));
  auto summary = receiver_.Finish();
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(summary.error().message.find("ended early (6 of 6 bytes)"), std::string::npos)
      << summary.error().message;
}

TEST_F(DumpReceiverTest, DataBeforeMetadataIsRejectedAtOnce) {
  DumpChunk chunk;
  chunk.set_data("x");
  auto ok = receiver_.OnChunk(chunk);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kDataLoss);
  EXPECT_TRUE(written_.empty());
}

TEST_F(DumpReceiverTest, MoreDataThanAnnouncedIsRejectedBeforeWriting) {
  auto chunks = MakeDumpStream("abcd", 4);
  chunks[0].mutable_metadata()->set_size_bytes(3);
  auto ok = Feed(chunks);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kDataLoss);
  EXPECT_TRUE(written_.empty());
}

// An agent streaming a dump while jemalloc writes it announces size 0: the
// trailer alone gives the size, and it is checked as strictly.
TEST_F(DumpReceiverTest, AStreamOfUnannouncedSizeIsCheckedAgainstTheTrailer) {
  const std::string data(10000, 'y');
  auto chunks = MakeDumpStream(data, 4096);
  chunks[0].mutable_metadata()->set_size_bytes(0);
  ASSERT_TRUE(Feed(chunks));
  auto summary = receiver_.Finish();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->size_bytes, 10000u);
  EXPECT_EQ(written_, data);
}

TEST_F(DumpReceiverTest, AStreamOfUnannouncedSizeWithAWrongTrailerSizeIsDataLoss) {
  auto chunks = MakeDumpStream("abcdef", 2);
  chunks[0].mutable_metadata()->set_size_bytes(0);
  chunks.back().mutable_trailer()->set_size_bytes(7);
  ASSERT_TRUE(Feed(chunks));
  auto summary = receiver_.Finish();
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(summary.error().message.find("trailer says 7"), std::string::npos)
      << summary.error().message;
}

TEST_F(DumpReceiverTest, AStreamOfUnannouncedSizeThatEndsEarlyIsDataLoss) {
  auto chunks = MakeDumpStream("abcdef", 2);
  chunks[0].mutable_metadata()->set_size_bytes(0);
  chunks.pop_back();
  ASSERT_TRUE(Feed(chunks));
  auto summary = receiver_.Finish();
  ASSERT_FALSE(summary);
  EXPECT_EQ(summary.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(summary.error().message.find("ended early (6 bytes)"), std::string::npos)
      << summary.error().message;
}

TEST_F(DumpReceiverTest, ChunkAfterTrailerIsRejected) {
  auto chunks = MakeDumpStream("ab", 1);
  chunks.push_back(chunks[1]);
  auto ok = Feed(chunks);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, ErrorCode::kDataLoss);
}

TEST_F(DumpReceiverTest, WriterErrorsPropagate) {
  DumpReceiver failing(
      [](std::string_view) -> Result<void> { return Fail(ErrorCode::kInternal, "disk full"); });
  auto chunks = MakeDumpStream("ab", 1);
  ASSERT_TRUE(failing.OnChunk(chunks[0]));
  auto ok = failing.OnChunk(chunks[1]);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message, "disk full");
}

TEST_F(DumpReceiverTest, UnknownChunkKindsFromNewerAgentsAreSkipped) {
  auto chunks = MakeDumpStream("ab", 1);
  chunks.insert(chunks.begin() + 1, DumpChunk());
  ASSERT_TRUE(Feed(chunks));
  EXPECT_TRUE(receiver_.Finish());
}

}  // namespace
}  // namespace memprof::cli
