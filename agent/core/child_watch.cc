#include "agent/core/child_watch.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "agent/core/core_log.h"
#include "common/fd.h"
#include "common/socket_path.h"
#include "common/unix_socket.h"

namespace memprof::agent {
namespace {

Fd OpenPidfd(pid_t pid) {
  // pidfd_open(2) since Linux 5.3; its descriptor is close-on-exec.
  return Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

}  // namespace

bool ChildWatch::Watching(pid_t pid) const {
  return std::any_of(children_.begin(), children_.end(),
                     [pid](const Child& c) { return c.pid == pid; });
}

void ChildWatch::AddChildrenOf(pid_t tid) {
  std::ifstream list("/proc/self/task/" + std::to_string(tid) + "/children");
  pid_t pid = 0;
  while (list >> pid) {
    if (children_.size() >= kMaxChildren) return;
    if (Watching(pid)) continue;
    Fd pidfd = OpenPidfd(pid);
    if (!pidfd) continue;  // ended already (and published nothing), or no pidfds here
    children_.push_back(Child{pid, OwnedFd(std::move(pidfd))});
  }
}

void ChildWatch::AppendPollFds(std::vector<pollfd>& fds) const {
  for (const Child& child : children_) fds.push_back(pollfd{child.pidfd.get(), POLLIN, 0});
}

void ChildWatch::Reap(const pollfd* fds, size_t count, const FsIdentity& as) {
  std::vector<pid_t> ended;
  for (size_t i = 0; i < count && i < children_.size(); ++i) {
    if (fds[i].revents != 0) ended.push_back(children_[i].pid);
  }
  for (pid_t pid : ended) {
    RemoveStaleSocket(pid, as);
    std::erase_if(children_, [pid](const Child& c) { return c.pid == pid; });
  }
}

void ChildWatch::RemoveStaleSocket(pid_t pid, const FsIdentity& identity) const {
  auto socket_path = SocketPathForPid(socket_dir_, pid);
  if (!socket_path) return;
  const std::string& path = *socket_path;
  const ScopedFsIdentity as(identity);
  struct stat st{};
  if (as.Call([&] { return ::lstat(path.c_str(), &st); }) != 0 || !S_ISSOCK(st.st_mode)) return;
  // connect() needs write permission on the socket file, as unlink() needs it
  // on the directory: both as the publishing user.
  if (as.Call([&] { return NobodyListens(path) ? 0 : -1; }) != 0) return;
  if (as.Call([&] { return ::unlink(path.c_str()); }) == 0) {
    CoreLog(LogLevel::kDebug, "removed the socket of child " + std::to_string(pid) + ", which ended");
  } else {
    CoreLog(LogLevel::kInfo, "could not remove " + path + " of child " + std::to_string(pid) +
                                 ", which ended: " + std::strerror(errno));
  }
}

void ChildWatch::AbandonAfterFork() {
  for (Child& child : children_) child.pidfd.Reset();  // closes only what is still ours
  children_.clear();
}

}  // namespace memprof::agent
