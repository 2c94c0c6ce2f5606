#include "common/fd.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace memprof {

void Fd::Reset(int fd) {
  if (fd_ >= 0) {
    // close() is not retried on EINTR: on Linux the descriptor is gone anyway.
    ::close(fd_);
  }
  fd_ = fd;
}

Result<uint64_t> FileSize(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    return Fail(ErrorCode::kInternal, std::string("fstat: ") + std::strerror(errno));
  }
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace memprof
