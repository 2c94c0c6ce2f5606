#ifndef MEMPROF_CLI_TARGET_DISCOVERY_H_
#define MEMPROF_CLI_TARGET_DISCOVERY_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "cli/target.h"
#include "common/proc_status.h"
#include "common/result.h"

namespace memprof::cli {

// One <pid>.sock found in the socket directory.
struct SocketEntry {
  Target target;
  bool process_exists = false;       // /proc/<pid> is there (else: a stale socket)
  uid_t uid = 0;                     // the process's real uid, or the socket's owner if gone
  std::vector<std::string> cmdline;  // empty when the process is gone or unreadable
};

// Finds agents from the outside, reading only the file system: the socket
// directory (<dir>/<pid>.sock, PRODUCT.md section 2) and /proc. Both roots are
// parameters so tests can point them at fixture directories. Never connects.
class TargetDiscovery {
 public:
  // `proc_root` is normally "/proc"; `socket_dir` is absolute (SocketDirectory()).
  TargetDiscovery(std::string proc_root, std::string socket_dir);

  const std::string& socket_dir() const { return socket_dir_; }

  // Every <pid>.sock socket in the directory, sorted by pid, including stale
  // ones. A directory that does not exist holds no sockets.
  [[nodiscard]] Result<std::vector<SocketEntry>> Scan() const;

  // pid > 0: that process's agent socket, with the container fallback
  // /proc/<pid>/root/<dir>/<nspid>.sock. pid == 0: the only live agent.
  // kNotFound: no such process / no agent / no agents at all;
  // kInvalidArgument: several agents and no pid (the message lists them).
  [[nodiscard]] Result<Target> Resolve(pid_t pid) const;

 private:
  Result<Target> ResolvePid(pid_t pid) const;
  Result<Target> ResolveOnlyAgent() const;
  Result<ProcStatus> ReadStatus(pid_t pid) const;
  SocketEntry MakeEntry(pid_t pid, const std::string& path, uid_t owner) const;
  std::string ProcPath(pid_t pid, const std::string& rest) const;

  std::string proc_root_;
  std::string socket_dir_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGET_DISCOVERY_H_
