#ifndef MEMPROF_AGENT_CORE_SOCKET_REGISTRY_H_
#define MEMPROF_AGENT_CORE_SOCKET_REGISTRY_H_

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "agent/core/fs_identity.h"
#include "agent/shared/owned_fd.h"
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
//
// The listening descriptor is an OwnedFd: if the host closes it, Intact()
// says so and Renew() binds a fresh socket at the same path.
//
// Every file operation acts as the user and group the process had when
// Listen() published (fs_identity.h), whatever user the host has switched to
// since, as far as the kernel allows it.
class SocketRegistry {
 public:
  [[nodiscard]] static Result<std::unique_ptr<SocketRegistry>> Listen(const std::string& dir,
                                                                      pid_t pid);
  ~SocketRegistry();
  SocketRegistry(const SocketRegistry&) = delete;
  SocketRegistry& operator=(const SocketRegistry&) = delete;

  int listen_fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  // The user and group the socket file belongs to: those that published it,
  // or those it was handed over to.
  FsIdentity identity() const;
  // Whether the listening descriptor is still the socket this registry bound.
  bool Intact() const { return fd_.Intact(); }
  // After the host closed the listening descriptor: removes the old socket
  // file (if it is still ours) and publishes a new socket at the same path.
  [[nodiscard]] Result<void> Renew();
  // Whether the socket file is gone (someone removed it, or the whole
  // directory): then nothing can connect, though the listening descriptor
  // is fine. A path that now names another file, a socket renamed within the
  // directory, or a path this process may no longer inspect is not "gone":
  // it is left alone.
  bool FileMissing() const;
  // After FileMissing(): publishes a new socket at the path (re-creating the
  // directory's last component if needed) and only then closes the old,
  // unreachable one; on failure the old one is kept.
  [[nodiscard]] Result<void> Republish();

  // Called on the host thread that is about to give up, for good, the user
  // that owns the socket (user_change.h), while it may still chown: makes
  // `heir` the socket file's owner and the identity of every later file
  // operation, so that the process can still remove its socket at exit (in
  // a sticky directory, only the file's owner or root may). Also used to
  // give the socket back when the host's call failed. Only in the process
  // that published it.
  [[nodiscard]] Result<void> HandOver(const FsIdentity& heir);

  // In a forked child: close the inherited descriptor (if it is still the
  // parent's socket and not a host descriptor that took its number), keep
  // the path, which stays the parent's.
  void AbandonAfterFork();

 private:
  SocketRegistry(OwnedFd fd, std::string dir, std::string path, pid_t owner, ino_t inode,
                 FsIdentity identity)
      : fd_(std::move(fd)),
        dir_(std::move(dir)),
        path_(std::move(path)),
        owner_(owner),
        inode_(inode),
        identity_(identity) {}

  OwnedFd fd_;
  std::string dir_;
  std::string path_;
  pid_t owner_;  // the process that created the socket (not the pid in its name)
  ino_t inode_;
  mutable std::mutex identity_mu_;  // host threads hand over, the accept thread reads
  FsIdentity identity_;             // the user and group the file belongs to
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_SOCKET_REGISTRY_H_
