#ifndef MEMPROF_CLI_TARGETS_STALE_SOCKET_H_
#define MEMPROF_CLI_TARGETS_STALE_SOCKET_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// Why a <pid>.sock is provably left over. `list` and discovery
// (PruneStaleSockets) remove only these; any other socket stays, whatever
// state it is in.
enum class StaleReason {
  kNone,           // it may still be someone's live agent
  kProcessGone,    // /proc/<pid> does not exist
  kPidReused,      // the process now holding the pid started after the socket was made
  kNobodyListens,  // connect() is refused: its listener is closed (SIGKILL, _exit, exec)
};

// How much later than its socket a process must have started to count as a
// different process: btime is whole seconds, start times are clock ticks,
// and file times come from another clock read; 2 s covers all three.
inline constexpr std::chrono::seconds kStartTimeSlack{2};

// What `list` knows about one socket when it decides.
struct SocketEvidence {
  bool process_gone = false;        // /proc/<pid> does not exist
  bool agent_answered = false;      // a Status call through it succeeded
  bool connection_refused = false;  // connect() said ECONNREFUSED
  std::optional<std::chrono::system_clock::time_point> process_started;
  std::chrono::system_clock::time_point socket_changed;  // SocketFileInfo::changed
};

// The verdict on `evidence`. An agent that answered is live whatever the
// clocks say: a wall clock stepped forward makes every process look younger
// than it is, and that must never cost a live agent its socket.
StaleReason ClassifySocket(const SocketEvidence& evidence);

// "process 123 no longer exists", ... for messages; "" for kNone.
std::string DescribeStaleReason(StaleReason reason, pid_t pid);

// Why `list`, run by `caller`, must leave this stale socket alone ("" when it
// may remove it): it lies inside a container's own directory, or it belongs
// to another user and the caller is not root.
std::string WhyNotRemovable(const SocketEntry& entry, uid_t caller);

// Removes the socket at `path` if it is still the file discovery found
// (`expected`: same device and inode), checked right before the unlink. The
// directory is opened with O_NOFOLLOW and the name looked up without
// following links, so a symbolic link is never followed at either level.
// Success also when the file is already gone; kFailedPrecondition when
// something else now sits at the path (it is left alone).
[[nodiscard]] Result<void> RemoveSocketIfUnchanged(const std::string& path,
                                                   const SocketFileInfo& expected);

// The verdict discovery reaches on `entry` without asking its agent
// anything (a connect that is accepted may load the server module of a live
// agent): its process is gone (or a zombie), or the process now holding the
// pid started after the socket was made and a connect() to it is refused.
// kNone otherwise; a live process's socket that nobody listens on is only
// found by `list`, which asks every agent anyway.
StaleReason ClassifyWithoutAsking(const SocketEntry& entry, const TargetDiscovery& discovery);

// Removes the socket of `entry`, found stale for `reason`, if `caller` may
// (WhyNotRemovable) and it is still the file discovery found; logs it at -v
// ("removed stale socket PATH: REASON"). "" when it is gone, else why it
// stays ("left alone: ..." or "not removed: ...").
std::string RemoveStaleSocket(const SocketEntry& entry, StaleReason reason, uid_t caller);

// What every command that looks for agents does first: removes,
// from `entries` and from the socket directory, the sockets that are stale
// by ClassifyWithoutAsking and that `caller` may remove. The ones that stay
// are logged at -vv. Returns the entries left.
std::vector<SocketEntry> PruneStaleSockets(std::vector<SocketEntry> entries,
                                           const TargetDiscovery& discovery, uid_t caller);
// The same over the socket directory (containers' sockets are never
// removed, so they are not looked for). A directory that cannot be read is
// left to the command's own discovery to report.
void PruneStaleSockets(const TargetDiscovery& discovery, uid_t caller);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_TARGETS_STALE_SOCKET_H_
