#include "common/text_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fd.h"

namespace memprof {

Result<std::string> ReadTextFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    int err = errno;
    ErrorCode code = err == ENOENT || err == ESRCH ? ErrorCode::kNotFound
                     : err == EACCES || err == EPERM ? ErrorCode::kPermissionDenied
                                                     : ErrorCode::kInternal;
    return Fail(code, "cannot read " + path + ": " + std::strerror(err));
  }
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ErrorCode code = err == ESRCH ? ErrorCode::kNotFound : ErrorCode::kInternal;
      return Fail(code, "cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace memprof
