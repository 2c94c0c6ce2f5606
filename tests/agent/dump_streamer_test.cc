#include "agent/dump_streamer.h"

#include <dirent.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/agent/test_allocations.h"

namespace memprof::agent {
namespace {

int OpenFdCount() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (::readdir(d) != nullptr) ++n;
  ::closedir(d);
  return n;
}

std::string ReadWhole(HeapDump& dump, size_t chunk) {
  std::string all, part;
  while (true) {
    auto more = dump.ReadNext(chunk, part);
    EXPECT_TRUE(more);
    if (!more || !*more) break;
    EXPECT_LE(part.size(), chunk);
    all += part;
  }
  return all;
}

class DumpStreamerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allocator_ = DetectAllocator();
    ASSERT_NE(allocator_->Jemalloc(), nullptr);
    ASSERT_TRUE(allocator_->Jemalloc()->SetActive(true));
    UseUpSampleCountdown();
    blocks_ = AllocateForProfile(512, 2048);
  }
  void TearDown() override {
    FreeAll(blocks_);
    (void)allocator_->Jemalloc()->SetActive(false);
  }
  std::unique_ptr<Allocator> allocator_;
  std::vector<void*> blocks_;
};

TEST_F(DumpStreamerTest, ChunksAddUpToTheDumpAndTheChecksumMatches) {
  DumpStreamer streamer(*allocator_, DumpLimits{.max_active = 2});
  auto dump = streamer.Dump();
  ASSERT_TRUE(dump) << dump.error().message;
  EXPECT_EQ((*dump)->sequence(), 1u);
  std::string bytes = ReadWhole(**dump, 4096);
  EXPECT_EQ(bytes.size(), (*dump)->size());
  EXPECT_EQ(bytes.rfind("heap_v2/", 0), 0u);
  Sha256 expected;
  expected.Update(bytes);
  EXPECT_EQ((*dump)->FinalSha256Hex(), expected.FinalHex());
  EXPECT_EQ(streamer.DumpsServed(), 1u);
}

TEST_F(DumpStreamerTest, LimitsConcurrentDumpsAndFreesTheSlot) {
  DumpStreamer streamer(*allocator_, DumpLimits{.max_active = 1});
  auto first = streamer.Dump();
  ASSERT_TRUE(first);
  auto second = streamer.Dump();
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, ErrorCode::kResourceExhausted);
  first->reset();
  auto third = streamer.Dump();
  ASSERT_TRUE(third) << third.error().message;
  EXPECT_EQ((*third)->sequence(), 2u);
}

TEST_F(DumpStreamerTest, LeavesNoDescriptorBehind) {
  DumpStreamer streamer(*allocator_, DumpLimits{.max_active = 2});
  const int before = OpenFdCount();
  for (int i = 0; i < 5; ++i) {
    auto dump = streamer.Dump();
    ASSERT_TRUE(dump);
    ReadWhole(**dump, 65536);
  }
  EXPECT_EQ(OpenFdCount(), before);
}

}  // namespace
}  // namespace memprof::agent
