#include "agent/heap/dump_streamer.h"

#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fcntl.h>

#include <chrono>
#include <optional>
#include <thread>

#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "agent/shared/high_fd_floor.h"
#include "tests/agent/support/test_allocations.h"

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

// A dump streamed while jemalloc writes it: read on one thread while
// jemalloc writes on another, it is the same whole, verified profile.
TEST_F(DumpStreamerTest, AStreamedDumpReadWhileWrittenIsWholeAndVerified) {
  DumpStreamer streamer(*allocator_, DumpLimits{.max_active = 2});
  auto started = streamer.Begin();
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(started->dump->size(), 0u) << "the size is not known before jemalloc is done";
  std::string bytes;
  std::thread reader([&] { bytes = ReadWhole(*started->dump, 4096); });
  started->write();
  reader.join();
  EXPECT_EQ(bytes.rfind("heap_v2/", 0), 0u);
  EXPECT_EQ(bytes.size(), started->dump->size());
  Sha256 expected;
  expected.Update(bytes);
  EXPECT_EQ(started->dump->FinalSha256Hex(), expected.FinalHex());
}

// The slot (what bounds the dumps in memory) is held until both the stream
// and jemalloc's writing are over, whichever ends first.
TEST_F(DumpStreamerTest, AStreamedDumpHoldsItsSlotUntilTheStreamAndTheWriterAreDone) {
  DumpStreamer streamer(*allocator_, DumpLimits{.max_active = 1});
  auto started = streamer.Begin();
  ASSERT_TRUE(started);
  started->dump.reset();  // the client went away before jemalloc wrote anything
  auto second = streamer.Begin();
  ASSERT_FALSE(second) << "a slot was freed while jemalloc still had the dump";
  EXPECT_EQ(second.error().code, ErrorCode::kResourceExhausted);
  started->write();
  started->write = nullptr;
  auto third = streamer.Begin();
  ASSERT_TRUE(third) << third.error().message;
  third->write();
}

TEST_F(DumpStreamerTest, StreamedDumpsLeaveNoDescriptorBehind) {
  DumpStreamer streamer(*allocator_, DumpLimits{.max_active = 2});
  const int before = OpenFdCount();
  for (int i = 0; i < 5; ++i) {
    auto started = streamer.Begin();
    ASSERT_TRUE(started);
    started->write();
    ReadWhole(*started->dump, 65536);
  }
  EXPECT_EQ(OpenFdCount(), before);
}

TEST(DumpProgressTest, AStreamerWaitsForGrowthAndSeesTheFinalSize) {
  Fd file(::memfd_create("dump-progress-test", MFD_CLOEXEC));
  ASSERT_TRUE(file);
  DumpProgress progress{DumpSlot()};
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(::write(file.get(), "heap_v2/", 8), 8);
  });
  auto grown = progress.WaitFor(1, file.get());
  writer.join();
  ASSERT_TRUE(grown) << grown.error().message;
  EXPECT_EQ(grown->readable, 8u);
  EXPECT_FALSE(grown->final);
  progress.Finish(8);
  auto final = progress.WaitFor(9, file.get());
  ASSERT_TRUE(final);
  EXPECT_EQ(final->readable, 8u);
  EXPECT_TRUE(final->final);
}

TEST(DumpProgressTest, AWriterThatFailsEndsTheStreamWithItsError) {
  Fd file(::memfd_create("dump-progress-test", MFD_CLOEXEC));
  ASSERT_TRUE(file);
  DumpProgress progress{DumpSlot()};
  std::thread writer([&] { progress.Finish(Fail(ErrorCode::kInternal, "prof.dump failed")); });
  auto waited = progress.WaitFor(1, file.get());
  writer.join();
  ASSERT_FALSE(waited);
  EXPECT_EQ(waited.error().code, ErrorCode::kInternal);
  EXPECT_EQ(waited.error().message, "prof.dump failed");
}

// The descriptor of the dump's memfd ("memprof-heap-dump"), found through
// /proc/self/fd; nullopt if there is not exactly one.
std::optional<int> DumpFileDescriptor() {
  std::optional<int> found;
  int count = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (const dirent* e = ::readdir(d)) {
    char target[256] = {};
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    if (::readlink(link.c_str(), target, sizeof(target) - 1) <= 0) continue;
    if (std::string(target).starts_with("/memfd:memprof-heap-dump")) {
      found = std::atoi(e->d_name);
      ++count;
    }
  }
  ::closedir(d);
  return count == 1 ? found : std::nullopt;
}

// What libunwind does to a number it remembers (its memory-validation pipe,
// which tcmalloc's sampler goes through), and what a host that closes every
// descriptor and opens its own does: the dump's number now names a pipe.
// The dump says so, reads nothing from the pipe ("Illegal seek" before) and
// does not close it (the number is someone else's now).
TEST(HeapDumpTest, ADescriptorTakenBySomeoneElseIsNeitherReadNorClosed) {
  auto file = CreateDumpFile();
  ASSERT_TRUE(file);
  ASSERT_EQ(::write(file->get(), "heap_v2/524288\n", 15), 15);
  auto dump = std::make_unique<HeapDump>(std::move(*file), 15, 1, 0);
  const std::optional<int> number = DumpFileDescriptor();
  ASSERT_TRUE(number.has_value());
  EXPECT_GE(*number, HighFdFloor()) << "away from the numbers hosts and libraries reuse";
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  ASSERT_EQ(::dup2(pipe_fds[0], *number), *number);  // closes the memfd, puts the pipe there
  std::string chunk;
  auto read = dump->ReadNext(4096, chunk);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("lost its descriptor"), std::string::npos)
      << read.error().message;
  dump.reset();
  EXPECT_NE(::fcntl(*number, F_GETFD), -1) << "the dump closed a descriptor that was not its own";
  ::close(*number);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace memprof::agent
