#ifndef MEMPROF_AGENT_CORE_CHILD_WATCH_H_
#define MEMPROF_AGENT_CORE_CHILD_WATCH_H_

#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "agent/core/fs_identity.h"
#include "agent/shared/owned_fd.h"

namespace memprof::agent {

// The children this process forks, watched so that their sockets do not
// outlive them. A forked child publishes <dir>/<childpid>.sock with an agent
// of its own; a child that ends with _exit() (a BGSAVE, a worker replaced on
// reload) or is killed runs no destructor and leaves that file behind. The
// parent's accept thread keeps a pidfd of each child in the poll set it
// already blocks in, so a child costs no wake-up while it lives; when one
// ends, its socket is removed unless something still listens on it (a new
// process that was given the same pid).
//
// Used by the accept thread only; not thread-safe.
class ChildWatch {
 public:
  // At most this many children are watched at once; more are left to
  // discovery's pruning (docs/security.md, "Who removes a socket").
  static constexpr size_t kMaxChildren = 1024;

  explicit ChildWatch(std::string socket_dir) : socket_dir_(std::move(socket_dir)) {}

  // Starts watching the children of host thread `tid` (the one that forked)
  // that are not watched yet: /proc/self/task/<tid>/children.
  void AddChildrenOf(pid_t tid);
  // One pollfd (POLLIN) per watched child, appended to `fds`.
  void AppendPollFds(std::vector<pollfd>& fds) const;
  // After poll(): `fds` are the entries AppendPollFds added, in order. Each
  // child whose pidfd is readable has ended: its socket goes if stale
  // (looked at and removed as `as`, the user that published this process's
  // own socket: a host such as varnishd's manager spends most of its time
  // as another user), and it is watched no more.
  void Reap(const pollfd* fds, size_t count, const FsIdentity& as);
  // In a forked child: the pidfds are the parent's (where they were in its
  // table at all): closed if still ours, never used.
  void AbandonAfterFork();
  size_t size() const { return children_.size(); }

 private:
  struct Child {
    pid_t pid;
    OwnedFd pidfd;
  };
  bool Watching(pid_t pid) const;
  void RemoveStaleSocket(pid_t pid, const FsIdentity& as) const;

  std::string socket_dir_;
  std::vector<Child> children_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_CHILD_WATCH_H_
