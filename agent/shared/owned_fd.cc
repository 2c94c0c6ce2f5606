#include "agent/shared/owned_fd.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <utility>

namespace memprof::agent {

namespace {

// One above the highest number the host has taken from the agent.
std::atomic<int> g_above_lost{0};

void NoteLost(int fd) {
  int current = g_above_lost.load();
  while (fd + 1 > current && !g_above_lost.compare_exchange_weak(current, fd + 1)) {
  }
}

}  // namespace

Fd MoveToHighNumber(Fd fd) {
  if (!fd) return fd;
  const int floor = HighFdFloor();
  int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, std::max(floor, g_above_lost.load()));
  if (moved < 0) moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, floor);  // over the limit
  if (moved < 0) return fd;  // the original is close-on-exec too
  return Fd(moved);          // `fd` closes the original
}

OwnedFd::OwnedFd(Fd fd) {
  // The identity is read before the move: once moved, the number may be the
  // host's already (a host thread's dup2() onto it), and reading it there
  // would make the agent take the host's file for its own.
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0) return;  // `fd` closes it
  Fd high = MoveToHighNumber(std::move(fd));
  if (!high) return;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  fd_ = high.Release();
}

OwnedFd::OwnedFd(OwnedFd&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), dev_(other.dev_), ino_(other.ino_) {}

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
    dev_ = other.dev_;
    ino_ = other.ino_;
  }
  return *this;
}

bool OwnedFd::Intact() const {
  struct stat st{};
  return fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

void OwnedFd::Reset() {
  if (Intact()) {
    Fd closing(fd_);
    fd_ = -1;
  }
  Forget();
}

void OwnedFd::Forget() {
  if (fd_ >= 0 && !Intact()) NoteLost(fd_);
  fd_ = -1;
}

}  // namespace memprof::agent
