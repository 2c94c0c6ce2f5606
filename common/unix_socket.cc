#include "common/unix_socket.h"

#include <fcntl.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace memprof {
namespace {

Error ConnectError(const std::string& path, int err) {
  switch (err) {
    case ENOENT:
      return Error(ErrorCode::kNotFound, "no agent socket at " + path);
    case ECONNREFUSED:
      return Error(ErrorCode::kUnavailable,
                   "nobody is listening on " + path + " (a stale socket left by a process that died?)");
    case EACCES:
    case EPERM:
      return Error(ErrorCode::kPermissionDenied,
                   "permission denied connecting to " + path +
                       " (the agent's socket is private to the target's user; run as that user or root)");
    case ETIMEDOUT:
      return Error(ErrorCode::kUnavailable, "timed out connecting to " + path);
    default:
      return Error(ErrorCode::kInternal,
                   "cannot connect to " + path + ": " + std::strerror(err));
  }
}

void SetSendTimeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

}  // namespace

Result<Fd> ConnectUnixSocket(const std::string& path, std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Fail(ErrorCode::kInvalidArgument, "socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return Fail(ErrorCode::kInternal, std::string("socket(): ") + std::strerror(errno));
  // A blocking Unix-socket connect waits only while the listener's backlog is
  // full, and honours SO_SNDTIMEO; it then fails with EAGAIN/EINPROGRESS.
  SetSendTimeout(fd.get(), timeout);
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = (errno == EAGAIN || errno == EINPROGRESS) ? ETIMEDOUT : errno;
    return Fail(ConnectError(path, err));
  }
  SetSendTimeout(fd.get(), std::chrono::milliseconds(0));
  // The descriptor is meant for gRPC (CreateInsecureChannelFromFd), which
  // adopts it as is and needs it non-blocking.
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return Fail(ErrorCode::kInternal, std::string("fcntl(O_NONBLOCK): ") + std::strerror(errno));
  }
  return fd;
}

Result<PeerCredentials> GetPeerCredentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Fail(ErrorCode::kInternal, std::string("SO_PEERCRED: ") + std::strerror(errno));
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

bool NobodyListens(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking: a listener with a full backlog answers EAGAIN, not "refused".
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return false;
  return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 &&
         errno == ECONNREFUSED;
}

}  // namespace memprof
