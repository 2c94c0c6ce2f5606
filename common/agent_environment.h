#ifndef MEMPROF_COMMON_AGENT_ENVIRONMENT_H_
#define MEMPROF_COMMON_AGENT_ENVIRONMENT_H_

#include <sys/types.h>

#include <string_view>

namespace memprof {

// How an agent reads the variables that decide whether it serves at all.
// The agent's configuration (agent/shared/agent_config.cc) and memprofctl's
// diagnosis of a process without a socket (cli/client/unreachable_agent.cc,
// cli/attach/attach_check.cc) both call these, so that what memprofctl says
// about another process's environment is what that process's agent did. The
// socket directory's rule is SocketDirectoryFrom() (common/socket_path.h).

inline constexpr char kAgentSwitchEnv[] = "MEMPROF_AGENT";
inline constexpr char kChildrenEnv[] = "MEMPROF_CHILDREN";
inline constexpr char kForkEnv[] = "MEMPROF_FORK";
// Set by a preloaded agent in its own environment: the pid of the process
// whose agent it is. A program that finds another process's pid there was
// exec()ed by that process (or by one of its forked children).
inline constexpr char kHostPidEnv[] = "MEMPROF_HOST_PID";

// Whether MEMPROF_AGENT=`value` switches the agent off: off, 0, false or no,
// in any case.
bool AgentSwitchedOff(std::string_view value);

// Whether MEMPROF_FORK=`value` leaves a forked child without an agent of its
// own: off, in any case.
bool ForkSwitchedOff(std::string_view value);

// Whether MEMPROF_CHILDREN=`value` gives a program exec()ed by a profiled
// process an agent of its own: inherit, in any case. Anything else, unset
// included, leaves that agent off.
bool ChildrenInherit(std::string_view value);

// Whether MEMPROF_HOST_PID (`host_pid`, nullptr when unset) names a process
// other than `self`: then `self` was exec()ed by that process or one of its
// forked children. A program exec()ed in place of the host (a wrapper
// script's `exec server`) has the same pid and is the host.
bool ExecdByAnotherHost(const char* host_pid, pid_t self);

}  // namespace memprof

#endif  // MEMPROF_COMMON_AGENT_ENVIRONMENT_H_
