#ifndef MEMPROF_AGENT_SHARED_HIGH_FD_FLOOR_H_
#define MEMPROF_AGENT_SHARED_HIGH_FD_FLOOR_H_

#include <sys/resource.h>

#include <algorithm>

namespace memprof::agent {

// The lowest number the agent's descriptors are moved to: three quarters of
// min(RLIMIT_NOFILE, 1024), so 768 under the usual limit of 1024, and never
// below 16. Inline: both halves of the agent use it, and neither can call
// into the other.
inline int HighFdFloor() {
  rlimit limit{};
  rlim_t soft = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    soft = std::min<rlim_t>(limit.rlim_cur, 1024);
  }
  return std::max(16, static_cast<int>(soft * 3 / 4));
}

// The lowest number of gRPC's epoll sets and eventfds (the server moves them
// there): 32 above HighFdFloor(), so that the core's few descriptors (its
// wake-up pipe, its socket, a connection being handed over) never take a
// number that gRPC keeps from a parent process and that a forked child must
// re-create for it (agent/service/grpc_fork_repair.h).
inline int GrpcFdFloor() { return HighFdFloor() + 32; }

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_HIGH_FD_FLOOR_H_
