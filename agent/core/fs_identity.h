#ifndef MEMPROF_AGENT_CORE_FS_IDENTITY_H_
#define MEMPROF_AGENT_CORE_FS_IDENTITY_H_

#include <sys/types.h>

#include <cerrno>

namespace memprof::agent {

// The user and group the agent's socket file operations act as.
//
// Hosts change their effective user and group while they run, some of them
// back and forth: varnishd's manager runs as `varnish` and turns into root
// only for the moments it needs to. glibc applies every such change to all
// threads of the process, the agent's included. The agent's socket was
// published under the identity the process had then, and only that identity
// may replace or remove it (in a 0700 directory of root's, or another user's
// entry in the sticky /tmp/memprof). The kernel keeps a file-system identity
// per thread (setfsuid, setfsgid), which glibc never broadcasts: the agent
// sets it for the few system calls that touch the socket directory.
struct FsIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
  bool operator==(const FsIdentity&) const = default;
};

// The calling thread's effective user and group.
FsIdentity EffectiveIdentity();

// Makes the calling thread act as `id` on the file system while it lives,
// and then puts back what the thread had. The kernel allows this when `id`
// is the process's real, effective or saved identity (or with CAP_SETUID and
// CAP_SETGID); a host that dropped its old user for good cannot go back to
// it, and the calls are then made as the user it is now.
//
// A host thread that changes the process's user resets this thread's
// file-system identity at any moment, even between setting it and the call
// that needs it: Call() sets it again before each call and repeats a call
// that was refused while the identity was lost (a few times at most).
class ScopedFsIdentity {
 public:
  explicit ScopedFsIdentity(FsIdentity id);
  ~ScopedFsIdentity();
  ScopedFsIdentity(const ScopedFsIdentity&) = delete;
  ScopedFsIdentity& operator=(const ScopedFsIdentity&) = delete;

  const FsIdentity& identity() const { return wanted_; }

  // Runs `call`, a system call that returns -1 and sets errno on failure.
  template <typename Fn>
  int Call(Fn&& call) const {
    constexpr int kAttempts = 4;
    for (int attempt = 1;; ++attempt) {
      Apply();
      const int result = call();
      if (result != -1 || attempt == kAttempts) return result;
      const int err = errno;
      if ((err != EACCES && err != EPERM) || !Contested()) {
        errno = err;
        return result;
      }
    }
  }

 private:
  void Apply() const;
  // Whether the process runs as someone else, or this thread lost `wanted_`.
  bool Contested() const;

  FsIdentity wanted_;
  FsIdentity previous_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_FS_IDENTITY_H_
