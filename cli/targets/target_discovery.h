#ifndef MEMPROF_CLI_TARGETS_TARGET_DISCOVERY_H_
#define MEMPROF_CLI_TARGETS_TARGET_DISCOVERY_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/client/target.h"
#include "common/proc_status.h"
#include "common/result.h"

namespace memprof::cli {

// What lstat() said about a socket file when discovery found it: enough to
// tell later whether the path still names the same file, and how old it is.
struct SocketFileInfo {
  uid_t owner = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  // The later of its mtime and ctime: no earlier than when it was bound, and
  // the later one so that a process is never judged younger than it is.
  std::chrono::system_clock::time_point changed;
};

// One <pid>.sock found in the socket directory, or in a container's socket
// directory under /proc/<pid>/root.
struct SocketEntry {
  Target target;
  bool process_exists = false;       // /proc/<pid> is there (else: a stale socket)
  uid_t uid = 0;                     // the process's effective uid, or the socket's owner if gone
  uid_t real_uid = 0;                // its real uid (uid when gone)
  std::vector<std::string> cmdline;  // empty when the process is gone or unreadable
  uid_t socket_owner = 0;            // owner of the socket file
  SocketFileInfo socket_file;        // its identity and age when found
  pid_t ppid = 0;                    // parent pid (/proc/<pid>/stat); 0 when gone or unknown
  // When the process now holding the pid started; nullopt when unknown.
  std::optional<std::chrono::system_clock::time_point> process_started;
  bool in_container = false;         // found under /proc/<pid>/root (another mount/pid ns)
  // Non-empty when the socket must not be trusted: its owner is neither the
  // process's user nor root, so someone else may have planted it.
  std::string untrusted;
};

// How a command picks its target: a pid, a regular expression over command
// names and lines, or (neither) the only live agent; or a target already
// looked up, which is used as it is.
struct TargetSelector {
  pid_t pid = 0;
  std::string name;  // ECMAScript regex, searched in the comm and the command line
  std::optional<Target> resolved = std::nullopt;
};

// Finds agents from the outside, reading only the file system: the socket
// directory (<dir>/<pid>.sock, docs/contract.md section 2) and /proc. Both roots are
// parameters so tests can point them at fixture directories. Never connects.
class TargetDiscovery {
 public:
  // `proc_root` is normally "/proc"; `socket_dir` is absolute (SocketDirectory()).
  TargetDiscovery(std::string proc_root, std::string socket_dir);

  const std::string& socket_dir() const { return socket_dir_; }

  // Whether the process has provably exited, read now: /proc/<pid> is
  // absent (ENOENT; unlike a status file that cannot be read, this means the
  // process is gone), or it is a zombie waiting for its parent.
  bool ProcessGone(pid_t pid) const;

  // Every <pid>.sock socket in the directory, including stale ones (never
  // removed here: `list` and PruneStaleSockets decide that, see
  // cli/targets/stale_socket.h), plus the
  // agents of processes in other mount or pid namespaces (containers,
  // systemd PrivateTmp) found under /proc/<pid>/root/<dir>/<nspid>.sock and
  // named by their pid here. Sorted by pid. A directory that does not exist
  // holds no sockets.
  [[nodiscard]] Result<std::vector<SocketEntry>> Scan() const;
  // Only the sockets in the socket directory, without the walk through every
  // /proc/<pid>/root that finds the containers' ones. Sorted by pid.
  [[nodiscard]] Result<std::vector<SocketEntry>> ScanSocketDirectory() const;

  // pid > 0: that process's agent socket, with the container fallback
  // /proc/<pid>/root/<dir>/<nspid>.sock. pid == 0: the only live agent.
  // kNotFound: no such process / no agent / no agents at all;
  // kInvalidArgument: several agents and no pid (the message lists them);
  // kPermissionDenied: the socket's owner is neither the process's user nor
  // root (planted by someone else).
  [[nodiscard]] Result<Target> Resolve(pid_t pid) const;
  // As above, or by --name: the only live agent whose command matches.
  [[nodiscard]] Result<Target> Resolve(const TargetSelector& selector) const;
  // Every live agent, or with a non-empty `pattern` every live agent whose
  // command matches it (--all [--name REGEX]); sorted by pid, possibly empty.
  // kInvalidArgument for a bad regular expression.
  [[nodiscard]] Result<std::vector<pid_t>> LivePids(const std::string& pattern) const;
  // The agent listening on the socket at `path` (a unix:/path target): who
  // it is comes from the socket's SO_PEERCRED, and the socket must be owned
  // by that process's user or root. kNotFound when nothing is there,
  // kUnavailable when nobody listens, kPermissionDenied for an untrusted socket.
  [[nodiscard]] Result<Target> ResolveSocketPath(const std::string& path) const;

 private:
  Result<Target> ResolvePid(pid_t pid) const;
  Result<Target> ResolveOnlyAgent() const;
  Result<Target> ResolveName(const std::string& pattern) const;
  Result<std::vector<SocketEntry>> Matching(const std::string& pattern) const;
  Result<ProcStatus> ReadStatus(pid_t pid) const;
  SocketEntry MakeEntry(pid_t pid, const std::string& path, const SocketFileInfo& file,
                        std::optional<int64_t> boot_time) const;
  void ReadStat(pid_t pid, std::optional<int64_t> boot_time, SocketEntry& entry) const;
  std::optional<int64_t> BootTime() const;
  void ScanContainers(std::vector<SocketEntry>& entries, std::optional<int64_t> boot_time) const;
  std::optional<std::string> ContainerSocket(pid_t pid) const;
  std::optional<std::string> ContainerSocketPath(pid_t pid) const;
  std::string ProcPath(pid_t pid, const std::string& rest) const;

  std::string proc_root_;
  std::string socket_dir_;
};

// Why a socket owned by `socket_owner` must not be trusted as the agent of a
// process running as `process_uid` (empty: it can be trusted). Root-owned
// sockets are trusted: a service that starts as root and drops privileges
// keeps the socket its agent made as root.
std::string UntrustedSocketReason(const std::string& path, uid_t socket_owner, pid_t pid,
                                  uid_t process_uid);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGETS_TARGET_DISCOVERY_H_
