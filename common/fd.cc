#include "common/fd.h"

#include <unistd.h>

namespace memprof {

void Fd::Reset(int fd) {
  if (fd_ >= 0) {
    // close() is not retried on EINTR: on Linux the descriptor is gone anyway.
    ::close(fd_);
  }
  fd_ = fd;
}

}  // namespace memprof
