#ifndef MEMPROF_CLI_CLIENT_UNREACHABLE_AGENT_H_
#define MEMPROF_CLI_CLIENT_UNREACHABLE_AGENT_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client/agent_facts.h"
#include "common/error.h"

namespace memprof::cli {

// How a program gets an agent: the end of every "has no memprof agent".
inline constexpr char kHowToGetAnAgent[] =
    "a running process gets one with `memprofctl attach --pid PID`; a program gets an agent when "
    "started with `memprofctl run -- CMD`, with LD_PRELOAD=libmemprof_agent.so, or by calling "
    "memprof_agent_start()";

// The same for process `pid`: `memprofctl attach --pid <pid>`.
std::string HowToGetAnAgent(pid_t pid);

// Why memprofctl cannot reach a process's agent, found from outside (every
// message true: docs/contract.md rule 11): the Explain* functions are pure and judge facts gathered
// by the Diagnose* functions, which read /proc and the file system. Where memprofctl may not read
// what it needs, the message says what it could not check.

// A live process without a socket at `socket_path` (in `socket_dir`).
struct MissingSocket {
  AgentFacts facts;
  std::string socket_dir;   // where memprofctl looked
  std::string socket_path;  // <socket_dir>/<pid>.sock
  PathFacts socket;         // lstat of socket_path (EACCES: the directory shut memprofctl out)
  PathFacts looked_in;      // lstat of socket_dir
  // The directory the agent uses by its environment (MEMPROF_SOCKET_DIR, or
  // the default); socket_dir when the environment could not be read.
  std::string agent_dir;
  PathFacts agent_dir_facts;         // lstat of agent_dir
  bool socket_in_agent_dir = false;  // a socket is at <agent_dir>/<pid>.sock
  // The process holds a listening Unix socket bound in agent_dir (the agent
  // binds in a private directory there, then renames the socket into place)
  // although no socket file is there: it was removed.
  bool listening_on_removed_file = false;
  uid_t caller = 0;  // memprofctl's effective uid
};

// The inodes of the listening sockets in the text of /proc/<pid>/net/unix
// (every process of that network namespace) that were bound to a path under
// `dir` + "/" (as bound: the file itself may have moved or gone).
std::vector<uint64_t> ListeningSocketsUnder(std::string_view net_unix, std::string_view dir);

// Not loaded, switched off, exec'd by a profiled process, serving in another
// directory, unable to publish in its directory, not started, its socket
// file removed under it, or (when nothing explains it) what to do to find
// out. kNotFound (exit 3) when there is no agent to talk to here;
// kUnavailable (3) when it runs but its socket file is gone; kFailedPrecondition (5) when the agent is
// loaded but its directory keeps it from serving; kPermissionDenied (4) when
// memprofctl may not look.
Error ExplainMissingSocket(const MissingSocket& missing);
Error DiagnoseMissingSocket(const std::string& proc_root, pid_t pid, const std::string& socket_dir,
                            const std::string& socket_path);

// connect() to a process's socket failed with EACCES.
struct DeniedSocket {
  pid_t pid = 0;
  std::string socket_path;
  PathFacts socket;                               // lstat of socket_path
  PathFacts directory;                            // lstat of its directory
  std::optional<ProcessCredentials> credentials;  // of the process, now
  uid_t caller = 0;
};

// Whose socket it is and who may use it: the process's user (run as that
// user or root), or root after the process dropped to another user, which
// it cannot take back. kPermissionDenied.
Error ExplainDeniedSocket(const DeniedSocket& denied);
Error DiagnoseDeniedSocket(const std::string& proc_root, pid_t pid, const std::string& socket_path);

// Every connection to a live agent was closed before it answered (`error`).
// The core does that when it cannot load its server module: the module file
// it looks for (MEMPROF_SERVER_LIBRARY, or libmemprof_agent_server.so beside
// the core's mapped path; beside the executable for a statically linked
// core) is checked through the process's root.
struct DroppedConnections {
  AgentFacts facts;
  std::string module_path;  // as the process sees it; empty when unknown
  PathFacts module;         // lstat of it, through /proc/<pid>/root
};
// kFailedPrecondition naming the module when it is missing or was not
// loaded; otherwise `error` with what memprofctl found or could not check.
Error ExplainDroppedConnections(const DroppedConnections& dropped, const Error& error);
Error DiagnoseDroppedConnections(const std::string& proc_root, pid_t pid, const Error& error);

// Where the core looks for its module (module_loader.cc), or "" when the
// facts do not say.
std::string ServerModulePath(const AgentFacts& facts);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_UNREACHABLE_AGENT_H_
