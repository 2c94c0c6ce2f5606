#include "agent/socket_registry.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

// Creates the last component of `dir` if it is missing, then validates it.
Result<void> EnsureDirectory(const std::string& dir) {
  const bool shared = dir == kDefaultSocketDir;
  const mode_t mode = shared ? 01777 : 0700;
  if (::mkdir(dir.c_str(), mode) == 0) {
    ::chmod(dir.c_str(), mode);  // mkdir applies the umask; the mode must be exact
  } else if (errno != EEXIST) {
    return Fail(SysError(CodeForErrno(errno), "cannot create socket directory " + dir));
  }
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) {
    return Fail(SysError(CodeForErrno(errno), "cannot inspect socket directory " + dir));
  }
  return CheckSocketDirectory(st, ::geteuid(), dir);
}

// A file at our own socket path was left by an earlier process with our pid
// (it exec'ed or was killed). Replace it only if it is a socket of our user.
Result<void> RemoveStaleSocket(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid()) {
    return Fail(ErrorCode::kPermissionDenied,
                path + " exists and is not a socket of this user; refusing to replace it");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Fail(SysError(CodeForErrno(errno), "cannot remove stale socket " + path));
  }
  return {};
}

Result<Fd> BindAndListen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Fail(ErrorCode::kInvalidArgument, "socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking: accept() must never wait (the acceptor polls first).
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return Fail(SysError(ErrorCode::kInternal, "socket()"));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Fail(SysError(CodeForErrno(errno), "cannot bind " + path));
  }
  if (::chmod(path.c_str(), 0600) != 0) return Fail(SysError(ErrorCode::kInternal, "chmod " + path));
  if (::listen(fd.get(), kBacklog) != 0) return Fail(SysError(ErrorCode::kInternal, "listen()"));
  return fd;
}

// Binds in a fresh 0700 directory next to `final_path`, then renames into place.
Result<Fd> BindPrivatelyThenPublish(const std::string& dir, const std::string& final_path) {
  // Short name: the staged path must fit in sun_path wherever the final one does.
  std::string tmpl = dir + "/.mXXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Fail(SysError(CodeForErrno(errno), "cannot create a private directory in " + dir));
  }
  const std::string staged = tmpl + "/s";
  auto fd = BindAndListen(staged);
  if (fd && ::rename(staged.c_str(), final_path.c_str()) != 0) {
    fd = Fail(SysError(CodeForErrno(errno), "cannot publish socket " + final_path));
  }
  ::unlink(staged.c_str());
  ::rmdir(tmpl.c_str());
  return fd;
}

// The inode of the socket file at `path` once published.
Result<ino_t> PublishedInode(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) {
    return Fail(SysError(ErrorCode::kInternal, "socket vanished after publishing: " + path));
  }
  return st.st_ino;
}

// Removes `path` if it is still the socket file with inode `inode`.
void UnlinkIfSame(const std::string& path, ino_t inode) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && st.st_ino == inode) ::unlink(path.c_str());
}

}  // namespace

Result<std::unique_ptr<SocketRegistry>> SocketRegistry::Listen(const std::string& dir, pid_t pid) {
  auto path = SocketPathForPid(dir, pid);
  if (!path) return Fail(path.error());
  if (auto r = EnsureDirectory(dir); !r) return Fail(r.error());
  if (auto r = RemoveStaleSocket(*path); !r) return Fail(r.error());
  auto fd = BindPrivatelyThenPublish(dir, *path);
  if (!fd) return Fail(fd.error());
  auto inode = PublishedInode(*path);
  if (!inode) return Fail(inode.error());
  return std::unique_ptr<SocketRegistry>(
      new SocketRegistry(OwnedFd(std::move(*fd)), dir, std::move(*path), ::getpid(), *inode));
}

Result<void> SocketRegistry::Renew() {
  fd_.Reset();  // forgets the number: it is the host's now
  UnlinkIfSame(path_, inode_);
  if (auto r = EnsureDirectory(dir_); !r) return Fail(r.error());
  auto fd = BindPrivatelyThenPublish(dir_, path_);
  if (!fd) return Fail(fd.error());
  auto inode = PublishedInode(path_);
  if (!inode) return Fail(inode.error());
  fd_ = OwnedFd(std::move(*fd));
  inode_ = *inode;
  return {};
}

SocketRegistry::~SocketRegistry() {
  if (::getpid() == owner_) UnlinkIfSame(path_, inode_);
}

void SocketRegistry::AbandonAfterFork() {
  fd_.Reset();
  owner_ = -1;
}

}  // namespace memprof::agent
