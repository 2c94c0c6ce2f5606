#include "agent/owned_fd.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

namespace memprof::agent {

int HighFdFloor() {
  rlimit limit{};
  rlim_t soft = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    soft = std::min<rlim_t>(limit.rlim_cur, 1024);
  }
  return std::max(16, static_cast<int>(soft * 3 / 4));
}

Fd MoveToHighNumber(Fd fd) {
  if (!fd) return fd;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, HighFdFloor());
  if (moved < 0) return fd;  // the original is close-on-exec too
  return Fd(moved);          // `fd` closes the original
}

OwnedFd::OwnedFd(Fd fd) {
  Fd high = MoveToHighNumber(std::move(fd));
  struct stat st{};
  if (!high || ::fstat(high.get(), &st) != 0) return;  // `high` closes it
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
  if (Intact()) Fd closing(fd_);
  fd_ = -1;
}

}  // namespace memprof::agent
