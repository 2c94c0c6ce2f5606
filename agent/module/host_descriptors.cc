// Part of libmemprof_agent_server.so only (like host_allocation.cc).
//
// gRPC creates epoll sets and eventfds of its own, and keeps its
// EventEngine's for the life of the process (agent/service/grpc_fork_repair.h). At
// the lowest free numbers they sit exactly where a forked child that closes
// its inherited descriptors (3 up to some limit) and opens its own would put
// the child's files. So these definitions, found first by gRPC through the
// server's deep binding, move what libc returns to a high number
// (GrpcFdFloor(), above the core's own descriptors, agent/shared/owned_fd.h): in a
// forked child the agent re-creates what gRPC keeps at exactly these
// numbers, which must then be free of the core's.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "agent/shared/high_fd_floor.h"

namespace {

// `fd` moved to a high number with the same close-on-exec flag, or `fd` as
// it is when no high number is free.
int MoveHigh(int fd) {
  if (fd < 0) return fd;
  const int flags = ::fcntl(fd, F_GETFD);
  const int command = (flags >= 0 && (flags & FD_CLOEXEC)) ? F_DUPFD_CLOEXEC : F_DUPFD;
  int moved = ::fcntl(fd, command, memprof::agent::GrpcFdFloor());
  if (moved < 0) moved = ::fcntl(fd, command, memprof::agent::HighFdFloor());  // over the limit
  if (moved < 0) return fd;
  ::close(fd);
  return moved;
}

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

#define MEMPROF_EXPORT __attribute__((visibility("default")))

extern "C" {
MEMPROF_EXPORT int epoll_create(int size) {
  static auto next = Next<int (*)(int)>("epoll_create");
  return MoveHigh(next(size));
}
MEMPROF_EXPORT int epoll_create1(int flags) {
  static auto next = Next<int (*)(int)>("epoll_create1");
  return MoveHigh(next(flags));
}
MEMPROF_EXPORT int eventfd(unsigned int initval, int flags) {
  static auto next = Next<int (*)(unsigned int, int)>("eventfd");
  return MoveHigh(next(initval, flags));
}
}  // extern "C"
