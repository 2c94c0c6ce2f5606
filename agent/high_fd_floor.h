#ifndef MEMPROF_AGENT_HIGH_FD_FLOOR_H_
#define MEMPROF_AGENT_HIGH_FD_FLOOR_H_

#include <sys/resource.h>

#include <algorithm>

namespace memprof::agent {

// The lowest number the agent's descriptors (and gRPC's, in the server) are
// moved to: three quarters of min(RLIMIT_NOFILE, 1024), so 768 under the
// usual limit of 1024, and never below 16. Inline: both halves of the agent
// use it, and neither can call into the other.
inline int HighFdFloor() {
  rlimit limit{};
  rlim_t soft = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    soft = std::min<rlim_t>(limit.rlim_cur, 1024);
  }
  return std::max(16, static_cast<int>(soft * 3 / 4));
}

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HIGH_FD_FLOOR_H_
