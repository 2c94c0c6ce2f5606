#ifndef MEMPROF_COMMON_UNIX_SOCKET_H_
#define MEMPROF_COMMON_UNIX_SOCKET_H_

#include <sys/types.h>

#include <chrono>
#include <string>

#include "common/fd.h"
#include "common/result.h"

namespace memprof {

// Credentials of the process at the other end of a Unix socket (SO_PEERCRED),
// as seen from the caller's pid namespace.
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Connects a SOCK_STREAM|SOCK_CLOEXEC socket to `path`, waiting at most
// `timeout`, and returns it non-blocking (ready for gRPC's fd adoption). Errors: kNotFound (no such file), kUnavailable (nobody listening:
// a stale socket), kPermissionDenied (EACCES/EPERM), kInternal otherwise.
[[nodiscard]] Result<Fd> ConnectUnixSocket(const std::string& path,
                                           std::chrono::milliseconds timeout);

[[nodiscard]] Result<PeerCredentials> GetPeerCredentials(int fd);

// True when `path` is a Unix socket nobody listens on (connect() is refused):
// what an agent killed with SIGKILL leaves behind. False when something
// answers, or the file is missing or unreachable (then nothing is known).
bool NobodyListens(const std::string& path);

}  // namespace memprof

#endif  // MEMPROF_COMMON_UNIX_SOCKET_H_
