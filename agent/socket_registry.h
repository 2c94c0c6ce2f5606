#ifndef MEMPROF_AGENT_SOCKET_REGISTRY_H_
#define MEMPROF_AGENT_SOCKET_REGISTRY_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::agent {

// Owns the agent's listening Unix socket at <dir>/<pid>.sock and its path.
//
// The directory is created if missing (the default shared directory as 01777,
// like /tmp/.X11-unix; a custom one as 0700) and validated before use. The
// socket is bound inside a private 0700 directory, chmod'ed to 0600 and then
// renamed into place, so it is never reachable with wider permissions. The
// path is unlinked on destruction, but only by the process that created it
// and only if it is still the same file (a forked child never removes its
// parent's socket).
class SocketRegistry {
 public:
  [[nodiscard]] static Result<std::unique_ptr<SocketRegistry>> Listen(const std::string& dir,
                                                                      pid_t pid);
  ~SocketRegistry();
  SocketRegistry(const SocketRegistry&) = delete;
  SocketRegistry& operator=(const SocketRegistry&) = delete;

  int listen_fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }

  // In a forked child: close the inherited descriptor, keep the path.
  void AbandonAfterFork();

 private:
  SocketRegistry(Fd fd, std::string path, pid_t owner, ino_t inode)
      : fd_(std::move(fd)), path_(std::move(path)), owner_(owner), inode_(inode) {}

  Fd fd_;
  std::string path_;
  pid_t owner_;  // the process that created the socket (not the pid in its name)
  ino_t inode_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SOCKET_REGISTRY_H_
