#include "agent/heap/capture_keeper.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace memprof::agent {
namespace {

// A memfd holding `text`, as the watcher's capture files are.
OwnedFd FileWith(const std::string& text) {
  Fd fd(::memfd_create("capture-keeper-test", MFD_CLOEXEC));
  EXPECT_TRUE(fd);
  EXPECT_EQ(::write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  return OwnedFd(std::move(fd));
}

CaptureInfo AddCapture(CaptureKeeper& keeper, uint64_t allocated) {
  const std::string body = "capture at " + std::to_string(allocated);
  const int number = keeper.BeginCapture(FileWith(body));
  return keeper.Add(number, CaptureInfo{.created_unix_ms = 1000,
                                        .allocated_bytes = allocated,
                                        .size_bytes = body.size()});
}

std::string ReadAll(const Fd& fd) {
  std::string out(256, '\0');
  ssize_t n = ::pread(fd.get(), out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

TEST(CaptureDueTest, NeedsTheFullGrowthAboveTheHighWaterMark) {
  EXPECT_FALSE(CaptureDue(100, 100, 50));
  EXPECT_FALSE(CaptureDue(149, 100, 50));
  EXPECT_TRUE(CaptureDue(150, 100, 50));
  EXPECT_TRUE(CaptureDue(1000, 100, 50));
}

TEST(CaptureDueTest, FallingBelowTheMarkNeverTriggers) {
  EXPECT_FALSE(CaptureDue(0, 100, 50));
  EXPECT_FALSE(CaptureDue(99, 100, 1));
  // No wrap-around near the top of the range.
  EXPECT_FALSE(CaptureDue(UINT64_MAX - 10, UINT64_MAX - 5, 1));
  EXPECT_TRUE(CaptureDue(UINT64_MAX, UINT64_MAX - 5, 5));
}

TEST(CaptureKeeperTest, KeepsTheNewestAndDropsTheOldest) {
  CaptureKeeper keeper(4);
  for (uint64_t i = 1; i <= 6; ++i) EXPECT_EQ(AddCapture(keeper, i * 100).sequence, i);
  auto held = keeper.Held();
  ASSERT_EQ(held.size(), 4u);
  EXPECT_EQ(held.front().sequence, 3u);
  EXPECT_EQ(held.back().sequence, 6u);
  EXPECT_EQ(held.back().allocated_bytes, 600u);
  EXPECT_EQ(keeper.TakenTotal(), 6u);
}

TEST(CaptureKeeperTest, OpensAHeldCaptureAsACopyThatOutlivesIt) {
  CaptureKeeper keeper(1);
  AddCapture(keeper, 100);
  auto opened = keeper.Open(1);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->info.allocated_bytes, 100u);
  AddCapture(keeper, 200);  // drops #1 while its copy is open
  EXPECT_EQ(ReadAll(opened->fd), "capture at 100");
}

TEST(CaptureKeeperTest, ADroppedOrUnknownSequenceIsNotFound) {
  CaptureKeeper keeper(2);
  for (uint64_t i = 1; i <= 3; ++i) AddCapture(keeper, i);
  auto dropped = keeper.Open(1);
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(dropped.error().message,
            "capture #1 is not held by the agent (it holds #2, #3; older captures are dropped "
            "for newer ones)");
  CaptureKeeper empty;
  auto none = empty.Open(7);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("it holds none"), std::string::npos);
}

TEST(CaptureKeeperTest, AFewerKeepDropsTheOldestAtOnceAndIsClamped) {
  CaptureKeeper keeper(16);
  for (uint64_t i = 1; i <= 5; ++i) AddCapture(keeper, i);
  keeper.SetKeep(2);
  auto held = keeper.Held();
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held.front().sequence, 4u);
  keeper.SetKeep(0);
  EXPECT_EQ(keeper.keep(), kMinCaptureKeep);
  keeper.SetKeep(1000);
  EXPECT_EQ(keeper.keep(), kMaxCaptureKeep);
}

TEST(CaptureKeeperTest, AnAbandonedCaptureIsNeitherHeldNorCounted) {
  CaptureKeeper keeper;
  const int number = keeper.BeginCapture(FileWith("half written"));
  keeper.Abandon(number);
  EXPECT_TRUE(keeper.Held().empty());
  EXPECT_EQ(keeper.TakenTotal(), 0u);
}

TEST(CaptureKeeperTest, ACaptureWhoseDescriptorTheHostClosedIsForgotten) {
  CaptureKeeper keeper;
  const int number = keeper.BeginCapture(FileWith("capture"));
  keeper.Add(number, CaptureInfo{.allocated_bytes = 1});
  // The host closes a descriptor it did not open and reuses the number.
  ::close(number);
  Fd host(::memfd_create("host-file", MFD_CLOEXEC));
  ASSERT_EQ(::dup2(host.get(), number), number);
  EXPECT_TRUE(keeper.Held().empty());
  EXPECT_FALSE(keeper.Open(1));
  // The keeper forgot the number without closing it: it is still the host's.
  EXPECT_NE(::fcntl(number, F_GETFD), -1);
  ::close(number);
}

// A forked child must not keep the parent's captures alive: its copies are
// closed (held ones and one being written), the parent's are not.
TEST(CaptureKeeperTest, AForkedChildClosesItsCopiesOfTheCaptures) {
  CaptureKeeper keeper;
  const int held = keeper.BeginCapture(FileWith("held"));
  keeper.Add(held, CaptureInfo{.allocated_bytes = 1});
  const int writing = keeper.BeginCapture(FileWith("being written"));
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const bool closed = ::fcntl(held, F_GETFD) == -1 && ::fcntl(writing, F_GETFD) == -1;
    ::_exit(closed ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child kept a capture open";
  EXPECT_NE(::fcntl(held, F_GETFD), -1);
  EXPECT_NE(::fcntl(writing, F_GETFD), -1);
  keeper.Abandon(writing);
}

}  // namespace
}  // namespace memprof::agent
