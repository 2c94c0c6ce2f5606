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

Result<void> WriteAll(int fd, std::string_view data, std::string_view what) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Fail(ErrorCode::kInternal, "writing " + std::string(what) + ": " +
                                            (n == 0 ? "no progress" : std::strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

}  // namespace memprof
