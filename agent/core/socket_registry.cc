#include "agent/core/socket_registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/core/fs_identity.h"
#include "common/socket_path.h"

namespace memprof::agent {
namespace {

constexpr int kBacklog = 64;

Error SysError(ErrorCode code, const std::string& what) {
  return Error(code, what + ": " + std::strerror(errno));
}

ErrorCode CodeForErrno(int err) {
  return (err == EACCES || err == EPERM) ? ErrorCode::kPermissionDenied : ErrorCode::kInternal;
}

// An agent whose process changed its user after start-up (a forked worker
// that dropped root) may not be able to write where its parent could.
Result<void> CheckWritable(const std::string& dir, const struct stat& st,
                           const ScopedFsIdentity& as) {
  if (as.Call([&] { return ::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS); }) == 0) {
    return {};
  }
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
  return Fail(ErrorCode::kPermissionDenied,
              "socket directory " + dir + " (uid " + std::to_string(st.st_uid) + ", mode " +
                  mode + ") is not writable by uid " + std::to_string(as.identity().uid) +
                  ", the user this process runs as; a service that changes its user needs a "
                  "directory that user may write to, such as the default " +
                  std::string(kDefaultSocketDir));
}

// Creates the last component of `dir` if it is missing, then validates it.
Result<void> EnsureDirectory(const std::string& dir, const ScopedFsIdentity& as) {
  const bool shared = dir == kDefaultSocketDir;
  const mode_t mode = shared ? 01777 : 0700;
  if (as.Call([&] { return ::mkdir(dir.c_str(), mode); }) == 0) {
    // mkdir applies the umask; the mode must be exact
    as.Call([&] { return ::chmod(dir.c_str(), mode); });
  } else if (errno != EEXIST) {
    return Fail(SysError(CodeForErrno(errno), "cannot create socket directory " + dir));
  }
  struct stat st{};
  if (as.Call([&] { return ::lstat(dir.c_str(), &st); }) != 0) {
    return Fail(SysError(CodeForErrno(errno), "cannot inspect socket directory " + dir));
  }
  if (auto r = CheckSocketDirectory(st, as.identity().uid, dir); !r) return r;
  return CheckWritable(dir, st, as);
}

// A file at our own socket path was left by an earlier process with our pid
// (it exec'ed or was killed). Replace it only if it is a socket of our user.
Result<void> RemoveStaleSocket(const std::string& path, const ScopedFsIdentity& as) {
  struct stat st{};
  if (as.Call([&] { return ::lstat(path.c_str(), &st); }) != 0) return {};
  if (!S_ISSOCK(st.st_mode) || st.st_uid != as.identity().uid) {
    return Fail(ErrorCode::kPermissionDenied,
                path + " exists and is not a socket of this user; refusing to replace it");
  }
  if (as.Call([&] { return ::unlink(path.c_str()); }) != 0 && errno != ENOENT) {
    return Fail(SysError(CodeForErrno(errno), "cannot remove stale socket " + path));
  }
  return {};
}

Result<Fd> BindAndListen(const std::string& path, const ScopedFsIdentity& as) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Fail(ErrorCode::kInvalidArgument, "socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking: accept() must never wait (the acceptor polls first).
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return Fail(SysError(ErrorCode::kInternal, "socket()"));
  const auto* sa = reinterpret_cast<const sockaddr*>(&addr);
  if (as.Call([&] { return ::bind(fd.get(), sa, sizeof(addr)); }) != 0) {
    return Fail(SysError(CodeForErrno(errno), "cannot bind " + path));
  }
  if (as.Call([&] { return ::chmod(path.c_str(), 0600); }) != 0) {
    return Fail(SysError(ErrorCode::kInternal, "chmod " + path));
  }
  if (::listen(fd.get(), kBacklog) != 0) return Fail(SysError(ErrorCode::kInternal, "listen()"));
  return fd;
}

// Binds in a fresh 0700 directory next to `final_path`, then renames into place.
Result<Fd> BindPrivatelyThenPublish(const std::string& dir, const std::string& final_path,
                                    const ScopedFsIdentity& as) {
  // Short name: the staged path must fit in sun_path wherever the final one does.
  std::string staging;
  const int made = as.Call([&] {
    staging = dir + "/.mXXXXXX";
    return ::mkdtemp(staging.data()) == nullptr ? -1 : 0;
  });
  if (made != 0) {
    return Fail(SysError(CodeForErrno(errno), "cannot create a private directory in " + dir));
  }
  const std::string staged = staging + "/s";
  auto fd = BindAndListen(staged, as);
  if (fd && as.Call([&] { return ::rename(staged.c_str(), final_path.c_str()); }) != 0) {
    fd = Fail(SysError(CodeForErrno(errno), "cannot publish socket " + final_path));
  }
  as.Call([&] { return ::unlink(staged.c_str()); });
  as.Call([&] { return ::rmdir(staging.c_str()); });
  return fd;
}

// The inode of the socket file at `path` once published.
Result<ino_t> PublishedInode(const std::string& path, const ScopedFsIdentity& as) {
  struct stat st{};
  if (as.Call([&] { return ::lstat(path.c_str(), &st); }) != 0) {
    return Fail(SysError(ErrorCode::kInternal, "socket vanished after publishing: " + path));
  }
  return st.st_ino;
}

// Removes `path` if it is still the socket file with inode `inode`. False
// only if it is and could not be removed (errno says why).
bool UnlinkIfSame(const std::string& path, ino_t inode, const ScopedFsIdentity& as) {
  struct stat st{};
  if (as.Call([&] { return ::lstat(path.c_str(), &st); }) != 0) return errno == ENOENT;
  if (st.st_ino != inode) return true;
  return as.Call([&] { return ::unlink(path.c_str()); }) == 0 || errno == ENOENT;
}

// Creates the directory if needed, then binds and publishes the socket.
struct Published {
  Fd fd;
  ino_t inode;
};
Result<Published> Publish(const std::string& dir, const std::string& path,
                          const ScopedFsIdentity& as) {
  if (auto r = EnsureDirectory(dir, as); !r) return Fail(r.error());
  if (auto r = RemoveStaleSocket(path, as); !r) return Fail(r.error());
  auto fd = BindPrivatelyThenPublish(dir, path, as);
  if (!fd) return Fail(fd.error());
  auto inode = PublishedInode(path, as);
  if (!inode) return Fail(inode.error());
  return Published{std::move(*fd), *inode};
}

}  // namespace

Result<std::unique_ptr<SocketRegistry>> SocketRegistry::Listen(const std::string& dir, pid_t pid) {
  auto path = SocketPathForPid(dir, pid);
  if (!path) return Fail(path.error());
  const FsIdentity identity = EffectiveIdentity();
  auto published = Publish(dir, *path, ScopedFsIdentity(identity));
  if (!published) return Fail(published.error());
  return std::unique_ptr<SocketRegistry>(new SocketRegistry(
      OwnedFd(std::move(published->fd)), dir, std::move(*path), ::getpid(), published->inode,
      identity));
}

FsIdentity SocketRegistry::identity() const {
  std::lock_guard lock(identity_mu_);
  return identity_;
}

Result<void> SocketRegistry::HandOver(const FsIdentity& heir) {
  if (::getpid() != owner_) return {};
  std::lock_guard lock(identity_mu_);
  if (heir == identity_) return {};
  // A socket handed to a user who may not write its directory could be
  // neither removed nor replaced by the process it names: say so, as a
  // publish as that user would (the worker that drops root before its agent
  // has published gets the same message from Publish).
  struct stat dir_st{};
  if (::stat(dir_.c_str(), &dir_st) == 0) {
    if (auto writable = CheckWritable(dir_, dir_st, ScopedFsIdentity(heir)); !writable) {
      return Fail(writable.error());
    }
  }
  struct stat st{};
  // As the process is now (root): the old identity may be the one leaving.
  if (::lstat(path_.c_str(), &st) == 0 && st.st_ino == inode_ &&
      ::lchown(path_.c_str(), heir.uid, heir.gid) != 0) {
    return Fail(SysError(CodeForErrno(errno), "cannot hand " + path_ + " over to uid " +
                                                  std::to_string(heir.uid)));
  }
  identity_ = heir;
  return {};
}

Result<void> SocketRegistry::Renew() {
  fd_.Reset();  // forgets the number: it is the host's now
  const ScopedFsIdentity as(identity());
  if (!UnlinkIfSame(path_, inode_, as)) {
    return Fail(SysError(CodeForErrno(errno), "cannot remove the old socket " + path_));
  }
  auto published = Publish(dir_, path_, as);
  if (!published) return Fail(published.error());
  fd_ = OwnedFd(std::move(published->fd));
  inode_ = published->inode;
  return {};
}

bool SocketRegistry::FileMissing() const {
  struct stat st{};
  const ScopedFsIdentity as(identity());
  if (as.Call([&] { return ::lstat(path_.c_str(), &st); }) == 0 || errno != ENOENT) return false;
  // Gone from its path; but renamed within the directory it is still
  // reachable (and whoever renamed it may be using it): only a socket the
  // directory no longer holds at all is unreachable.
  DIR* dir = nullptr;
  as.Call([&] {
    dir = ::opendir(dir_.c_str());
    return dir == nullptr ? -1 : 0;
  });
  if (dir == nullptr) return errno == ENOENT;
  bool held = false;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_ino == inode_) {
      held = true;
      break;
    }
  }
  ::closedir(dir);
  return !held;
}

Result<void> SocketRegistry::Republish() {
  const ScopedFsIdentity as(identity());
  auto published = Publish(dir_, path_, as);
  if (!published) return Fail(published.error());
  fd_.Reset();
  fd_ = OwnedFd(std::move(published->fd));
  inode_ = published->inode;
  return {};
}

SocketRegistry::~SocketRegistry() {
  if (::getpid() == owner_) UnlinkIfSame(path_, inode_, ScopedFsIdentity(identity()));
}

void SocketRegistry::AbandonAfterFork() {
  fd_.Reset();
  owner_ = -1;
}

}  // namespace memprof::agent
