#include "cli/targets/stale_socket.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/io/logging.h"
#include "common/fd.h"
#include "common/path.h"
#include "common/unix_socket.h"

namespace memprof::cli {
namespace {

Error RemoveError(const std::string& path, int err) {
  const ErrorCode code =
      err == EACCES || err == EPERM ? ErrorCode::kPermissionDenied : ErrorCode::kInternal;
  return Error(code, "cannot remove " + path + ": " + std::strerror(err));
}

SocketEvidence EvidenceOnFile(const SocketEntry& entry) {
  return SocketEvidence{.process_started = entry.process_started,
                        .socket_changed = entry.socket_file.changed};
}

}  // namespace

StaleReason ClassifySocket(const SocketEvidence& evidence) {
  if (evidence.process_gone) return StaleReason::kProcessGone;
  if (evidence.agent_answered) return StaleReason::kNone;
  if (evidence.connection_refused) return StaleReason::kNobodyListens;
  if (evidence.process_started &&
      *evidence.process_started > evidence.socket_changed + kStartTimeSlack) {
    return StaleReason::kPidReused;
  }
  return StaleReason::kNone;
}

std::string DescribeStaleReason(StaleReason reason, pid_t pid) {
  const std::string p = std::to_string(pid);
  switch (reason) {
    case StaleReason::kNone:
      return "";
    case StaleReason::kProcessGone:
      return "process " + p + " no longer exists";
    case StaleReason::kPidReused:
      return "pid " + p + " now belongs to a process that started after the socket was made";
    case StaleReason::kNobodyListens:
      return "nobody listens on it (its agent stopped, or the process exec'd a program "
             "without one)";
  }
  return "";
}

std::string WhyNotRemovable(const SocketEntry& entry, uid_t caller) {
  if (entry.in_container) return "it is inside the container's own socket directory";
  if (caller != 0 && entry.socket_file.owner != caller) {
    return "it belongs to uid " + std::to_string(entry.socket_file.owner) +
           "; that user or root can remove it";
  }
  return "";
}

StaleReason ClassifyWithoutAsking(const SocketEntry& entry, const TargetDiscovery& discovery) {
  SocketEvidence evidence = EvidenceOnFile(entry);
  evidence.process_gone = discovery.ProcessGone(entry.target.pid);
  if (evidence.process_gone) return ClassifySocket(evidence);
  if (!entry.process_exists || !entry.untrusted.empty()) return StaleReason::kNone;
  if (ClassifySocket(evidence) != StaleReason::kPidReused) return StaleReason::kNone;
  // The clocks say the process is younger than its socket, but a wall clock
  // stepped forward says so of every process: only a refused connect proves
  // that no agent listens there.
  return NobodyListens(entry.target.socket_path) ? StaleReason::kPidReused : StaleReason::kNone;
}

std::string RemoveStaleSocket(const SocketEntry& entry, StaleReason reason, uid_t caller) {
  if (const std::string why = WhyNotRemovable(entry, caller); !why.empty()) {
    return "left alone: " + why;
  }
  if (auto removed = RemoveSocketIfUnchanged(entry.target.socket_path, entry.socket_file);
      !removed) {
    return "not removed: " + removed.error().message;
  }
  Log().info("removed stale socket {}: {}", entry.target.socket_path,
             DescribeStaleReason(reason, entry.target.pid));
  return "";
}

std::vector<SocketEntry> PruneStaleSockets(std::vector<SocketEntry> entries,
                                           const TargetDiscovery& discovery, uid_t caller) {
  std::erase_if(entries, [&discovery, caller](const SocketEntry& entry) {
    const StaleReason reason = ClassifyWithoutAsking(entry, discovery);
    if (reason == StaleReason::kNone) return false;
    const std::string stays = RemoveStaleSocket(entry, reason, caller);
    if (stays.empty()) return true;
    Log().debug("stale socket {} ({}): {}", entry.target.socket_path,
                DescribeStaleReason(reason, entry.target.pid), stays);
    return false;
  });
  return entries;
}

void PruneStaleSockets(const TargetDiscovery& discovery, uid_t caller) {
  auto entries = discovery.ScanSocketDirectory();
  if (entries) (void)PruneStaleSockets(std::move(*entries), discovery, caller);
}

Result<void> RemoveSocketIfUnchanged(const std::string& path, const SocketFileInfo& expected) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) {
    return Fail(ErrorCode::kInvalidArgument, "not a socket path: " + path);
  }
  const std::string dir = PathDirname(path);
  const std::string name(PathBasename(path));
  Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd) return Fail(RemoveError(path, errno));
  struct stat now {};
  if (::fstatat(dir_fd.get(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return {};
    return Fail(RemoveError(path, errno));
  }
  // An agent may have re-created its socket at this path since discovery
  // looked: that new file is not the stale one.
  if (!S_ISSOCK(now.st_mode) || now.st_dev != expected.dev || now.st_ino != expected.ino) {
    return Fail(ErrorCode::kFailedPrecondition,
                path + " was replaced since it was found; left alone");
  }
  if (::unlinkat(dir_fd.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
    return Fail(RemoveError(path, errno));
  }
  return {};
}

}  // namespace memprof::cli
