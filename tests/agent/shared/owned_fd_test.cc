// OwnedFd: the agent's descriptors sit at high numbers, are close-on-exec,
// and a number the host has taken over is forgotten, never closed, and never
// claimed again.
#include "agent/shared/owned_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memprof::agent {
namespace {

// The read end of a fresh pipe, owned by the agent (the write end is closed).
OwnedFd OwnedPipeEnd() {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  ::close(fds[1]);
  return OwnedFd(Fd(fds[0]));
}

ino_t InodeOf(int fd) {
  struct stat st{};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

TEST(OwnedFdTest, SitsAtAHighCloseOnExecNumber) {
  OwnedFd owned = OwnedPipeEnd();
  ASSERT_TRUE(owned.valid());
  EXPECT_GE(owned.get(), HighFdFloor());
  EXPECT_TRUE(::fcntl(owned.get(), F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(owned.Intact());
}

TEST(OwnedFdTest, ResetClosesItsOwnDescriptor) {
  OwnedFd owned = OwnedPipeEnd();
  const int number = owned.get();
  owned.Reset();
  EXPECT_FALSE(owned.valid());
  EXPECT_EQ(::fcntl(number, F_GETFD), -1) << "the agent's own descriptor stayed open";
}

// The host closed the agent's number and put a file of its own there (as
// after close_range(3, ~0U) and dup2): the agent leaves it open, and its next
// descriptors go above that number, which the host may be about to reuse.
TEST(OwnedFdTest, ANumberTheHostTookIsLeftOpenAndNeverClaimedAgain) {
  OwnedFd owned = OwnedPipeEnd();
  const int number = owned.get();
  const int host_file = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(host_file, 0);
  ASSERT_EQ(::dup2(host_file, number), number);
  ::close(host_file);
  const ino_t host_inode = InodeOf(number);
  EXPECT_FALSE(owned.Intact());
  owned.Reset();
  EXPECT_EQ(InodeOf(number), host_inode) << "the agent closed the host's file";
  ::close(number);  // the host's own close; the number is free again
  OwnedFd next = OwnedPipeEnd();
  EXPECT_GT(next.get(), number) << "the agent took back a number the host had reused";
}

}  // namespace
}  // namespace memprof::agent
