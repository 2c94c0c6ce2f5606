#include "agent/service/grpc_fork_repair.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <linux/kcmp.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/logging/agent_logger.h"

namespace memprof::agent {
namespace {

// One registration of an epoll set, as /proc/thread-self/fdinfo shows it,
// and the flags of the eventfd registered.
struct Registration {
  int fd = -1;
  uint32_t events = 0;
  uint64_t data = 0;
  bool nonblocking = false;
  bool close_on_exec = true;
  bool operator==(const Registration& o) const {
    return fd == o.fd && events == o.events && data == o.data;
  }
};

struct State {
  bool before_noted = false;
  std::set<int> before;  // the host's epoll descriptors before gRPC started
  pid_t noted_by = 0;    // 0 until gRPC's are noted
  std::map<int, std::vector<Registration>> kept;  // gRPC's epoll fd -> registrations
};

State& TheState() {
  static State* state = new State();  // never destroyed: used up to exit
  return *state;
}

// Whether this thread has a descriptor table of its own (the accept
// thread's, private_fd_table.h), not the host's.
bool OwnTable() {
  return ::syscall(SYS_kcmp, ::getpid(), ::gettid(), KCMP_FILES, 0, 0) > 0;
}

// This thread's table: /proc/self would show the main thread's.
std::string LinkOf(int fd) {
  char buf[128];
  const std::string path = "/proc/thread-self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

bool IsEpoll(int fd) { return LinkOf(fd) == "anon_inode:[eventpoll]"; }
bool IsEventfd(int fd) { return LinkOf(fd) == "anon_inode:[eventfd]"; }

std::set<int> OpenEpollDescriptors() {
  std::set<int> out;
  DIR* dir = ::opendir("/proc/thread-self/fd");
  if (dir == nullptr) return out;
  const int own = ::dirfd(dir);
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    if (IsEpoll(static_cast<int>(fd))) out.insert(static_cast<int>(fd));
  }
  ::closedir(dir);
  return out;
}

std::vector<Registration> RegistrationsOf(int epoll_fd) {
  std::vector<Registration> out;
  std::ifstream in("/proc/thread-self/fdinfo/" + std::to_string(epoll_fd));
  for (std::string line; std::getline(in, line);) {
    Registration r;
    unsigned events = 0;
    unsigned long long data = 0;
    if (std::sscanf(line.c_str(), "tfd: %d events: %x data: %llx", &r.fd, &events, &data) == 3) {
      r.events = events;
      r.data = data;
      r.nonblocking = (::fcntl(r.fd, F_GETFL) & O_NONBLOCK) != 0;
      r.close_on_exec = (::fcntl(r.fd, F_GETFD) & FD_CLOEXEC) != 0;
      out.push_back(r);
    }
  }
  return out;
}

bool HoldsAll(const std::vector<Registration>& now, const std::vector<Registration>& noted) {
  for (const Registration& r : noted) {
    if (std::find(now.begin(), now.end(), r) == now.end()) return false;
  }
  return true;
}

// Puts `fresh` at number `fd` with the close-on-exec flag asked for. It may
// be there already: new descriptors go to the lowest free high number
// (host_descriptors.cc), which in a table of the agent's own is often
// exactly the one it is to replace.
bool PlaceAt(int fresh, int fd, bool close_on_exec) {
  if (fresh == fd) return ::fcntl(fd, F_SETFD, close_on_exec ? FD_CLOEXEC : 0) == 0;
  const bool ok = ::dup3(fresh, fd, close_on_exec ? O_CLOEXEC : 0) == fd;
  ::close(fresh);
  return ok;
}

// A fresh eventfd at the registration's number, with its flags; false if
// it failed.
bool ReplaceEventfd(const Registration& r) {
  const int fresh = ::eventfd(0, r.nonblocking ? EFD_NONBLOCK : 0);
  return fresh >= 0 && PlaceAt(fresh, r.fd, r.close_on_exec);
}

// A private epoll set at `epoll_fd` with the same registrations; each
// eventfd registered in it is replaced too (the kick goes to this process
// only). In a table of the agent's own, the numbers hold nothing of the
// host's, and are taken whatever they hold.
bool Privatize(int epoll_fd, const std::vector<Registration>& registrations, bool own_table) {
  for (const Registration& r : registrations) {
    if ((!own_table && !IsEventfd(r.fd)) || !ReplaceEventfd(r)) return false;
  }
  const int fresh = ::epoll_create1(EPOLL_CLOEXEC);
  if (fresh < 0) return false;
  bool ok = true;
  for (const Registration& r : registrations) {
    epoll_event ev{};
    ev.events = r.events;
    ev.data.u64 = r.data;
    ok = ok && ::epoll_ctl(fresh, EPOLL_CTL_ADD, r.fd, &ev) == 0;
  }
  if (!ok) {
    ::close(fresh);
    return false;
  }
  return PlaceAt(fresh, epoll_fd, true);
}

// Still gRPC's only if it holds what was noted. It may hold more by now (the
// parent, sharing it, may have started gRPC again since): those are the
// parent's, and are not copied.
bool StillGrpcs(int fd, const std::vector<Registration>& registrations) {
  bool ours = IsEpoll(fd) && HoldsAll(RegistrationsOf(fd), registrations);
  for (const Registration& r : registrations) ours = ours && IsEventfd(r.fd);
  return ours;
}

}  // namespace

void NoteEpollDescriptorsBeforeGrpc() {
  State& s = TheState();
  if (s.before_noted) return;
  s.before = OpenEpollDescriptors();
  s.before_noted = true;
}

void NoteEpollDescriptorsGrpcKeeps() {
  State& s = TheState();
  if (!s.before_noted || s.noted_by != 0) return;
  for (int fd : OpenEpollDescriptors()) {
    if (s.before.contains(fd)) continue;
    std::vector<Registration> registrations = RegistrationsOf(fd);
    bool only_eventfds = !registrations.empty();
    for (const Registration& r : registrations) only_eventfds = only_eventfds && IsEventfd(r.fd);
    if (only_eventfds) s.kept[fd] = std::move(registrations);
  }
  s.noted_by = ::getpid();
}

bool InheritedGrpcDescriptorsIntact() {
  const State& s = TheState();
  if (s.noted_by == 0 || s.noted_by == ::getpid() || OwnTable()) return true;
  for (const auto& [fd, registrations] : s.kept) {
    if (!StillGrpcs(fd, registrations)) return false;
  }
  return true;
}

bool PrivatizeInheritedGrpcDescriptors() {
  State& s = TheState();
  if (s.noted_by == 0) return true;
  const bool child = s.noted_by != ::getpid();
  const bool intact = std::all_of(s.kept.begin(), s.kept.end(), [](const auto& kept) {
    return StillGrpcs(kept.first, kept.second);
  });
  // The same process and the same agent table: gRPC's are where it left them.
  if (!child && intact) return true;
  // A table of the agent's own that lacks them: a child's (made from the
  // host's), or this process's after the agent was stopped and started
  // again (a new accept thread, a new table). They are made anew.
  const bool own_table = OwnTable();
  for (const auto& [fd, registrations] : s.kept) {
    if (!own_table && !StillGrpcs(fd, registrations)) {
      Logger().warn("gRPC cannot start: the host closed fd {}, which gRPC keeps open", fd);
      return false;
    }
    if (!Privatize(fd, registrations, own_table)) {
      Logger().warn("gRPC cannot start: fd {} could not be replaced", fd);
      return false;
    }
  }
  s.noted_by = ::getpid();
  return true;
}

}  // namespace memprof::agent
