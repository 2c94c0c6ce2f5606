#include "cli/targets/target_discovery.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <regex>
#include <set>
#include <utility>

#include "cli/client/unreachable_agent.h"
#include "common/socket_path.h"
#include "common/text_file.h"
#include "common/unix_socket.h"

namespace memprof::cli {
namespace {

std::chrono::system_clock::time_point WallTime(const timespec& ts) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

// lstat(), so a symbolic link is never taken for the socket it points to.
std::optional<SocketFileInfo> StatSocket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return std::nullopt;
  return SocketFileInfo{st.st_uid, st.st_dev, st.st_ino,
                        std::max(WallTime(st.st_mtim), WallTime(st.st_ctim))};
}

bool IsSocket(const std::string& path, uid_t* owner = nullptr) {
  const auto info = StatSocket(path);
  if (info && owner != nullptr) *owner = info->owner;
  return info.has_value();
}

// What sits at `path` when it exists but is not a socket ("a regular
// file"), else "".
std::string NonSocketKind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISSOCK(st.st_mode)) return "";
  if (S_ISREG(st.st_mode)) return "a regular file";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  return "a special file";
}

// Kernel threads have no user-space memory: "Kthread: 1" in their status
// (Linux 6.2+); on older kernels, kthreadd (pid 2) and its children.
bool IsKernelThread(const std::string& status_text, const ProcStatus& status) {
  if (status_text.find("\nKthread:\t1") != std::string::npos) return true;
  return status_text.find("\nKthread:") == std::string::npos &&
         ((status.pid == 2 && status.name == "kthreadd") || status.ppid == 2);
}

std::optional<std::string> ReadLink(const std::string& path) {
  char buf[256];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<pid_t> PidFromDirName(const char* name) {
  pid_t pid = 0;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || pid > 100000000) return std::nullopt;
    pid = pid * 10 + (*c - '0');
  }
  return pid > 0 ? std::optional<pid_t>(pid) : std::nullopt;
}

std::string JoinCommandLine(const SocketEntry& entry) {
  std::string joined;
  for (const std::string& arg : entry.cmdline) joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

std::string JoinCandidates(const std::vector<SocketEntry>& live) {
  std::string out;
  for (const SocketEntry& e : live) {
    if (!out.empty()) out += ", ";
    out += std::to_string(e.target.pid);
    if (!e.target.command.empty()) out += " (" + e.target.command + ")";
  }
  return out;
}

}  // namespace

TargetDiscovery::TargetDiscovery(std::string proc_root, std::string socket_dir)
    : proc_root_(std::move(proc_root)), socket_dir_(std::move(socket_dir)) {}

std::string TargetDiscovery::ProcPath(pid_t pid, const std::string& rest) const {
  return proc_root_ + "/" + std::to_string(pid) + "/" + rest;
}

Result<ProcStatus> TargetDiscovery::ReadStatus(pid_t pid) const {
  auto text = ReadTextFile(ProcPath(pid, "status"));
  if (!text) return Fail(text.error());
  return ParseProcStatus(*text);
}

std::string UntrustedSocketReason(const std::string& path, uid_t socket_owner, pid_t pid,
                                  uid_t process_uid) {
  if (socket_owner == process_uid || socket_owner == 0) return "";
  return "socket " + path + " is owned by uid " + std::to_string(socket_owner) + " but pid " +
         std::to_string(pid) + " runs as uid " + std::to_string(process_uid) +
         ": it was not made by that process's agent (planted by someone else?); refusing it";
}

bool TargetDiscovery::ProcessGone(pid_t pid) const {
  struct stat st {};
  if (::lstat(ProcPath(pid, "").c_str(), &st) != 0) return errno == ENOENT;
  // A zombie has exited; only its parent's wait is left.
  auto text = ReadTextFile(ProcPath(pid, "stat"));
  if (!text) return false;
  auto stat = ParseProcStat(*text);
  return stat && (stat->state == 'Z' || stat->state == 'X');
}

std::optional<int64_t> TargetDiscovery::BootTime() const {
  auto text = ReadTextFile(proc_root_ + "/stat");
  if (!text) return std::nullopt;
  auto btime = ParseBootTime(*text);
  return btime ? std::optional<int64_t>(*btime) : std::nullopt;
}

// The parent pid, and when the process started (if the boot time is known).
void TargetDiscovery::ReadStat(pid_t pid, std::optional<int64_t> boot_time,
                               SocketEntry& entry) const {
  auto text = ReadTextFile(ProcPath(pid, "stat"));
  if (!text) return;
  auto stat = ParseProcStat(*text);
  if (!stat) return;
  entry.ppid = stat->ppid;
  if (boot_time) {
    entry.process_started = ProcessStartTime(*boot_time, stat->start_ticks, ::sysconf(_SC_CLK_TCK));
  }
}

SocketEntry TargetDiscovery::MakeEntry(pid_t pid, const std::string& path,
                                       const SocketFileInfo& file,
                                       std::optional<int64_t> boot_time) const {
  SocketEntry entry;
  entry.target.pid = pid;
  entry.target.socket_path = path;
  entry.uid = file.owner;
  entry.real_uid = file.owner;
  entry.socket_owner = file.owner;
  entry.socket_file = file;
  if (auto status = ReadStatus(pid)) {
    entry.process_exists = true;
    entry.target.command = status->name;
    entry.uid = status->effective_uid;
    entry.real_uid = status->real_uid;
    entry.untrusted = UntrustedSocketReason(path, file.owner, pid, status->effective_uid);
    if (auto cmdline = ReadTextFile(ProcPath(pid, "cmdline"))) {
      entry.cmdline = ParseCmdline(*cmdline);
    }
    ReadStat(pid, boot_time, entry);
  }
  return entry;
}

namespace {

void SortByPid(std::vector<SocketEntry>& entries) {
  std::sort(entries.begin(), entries.end(),
            [](const SocketEntry& a, const SocketEntry& b) { return a.target.pid < b.target.pid; });
}

}  // namespace

Result<std::vector<SocketEntry>> TargetDiscovery::Scan() const {
  auto entries = ScanSocketDirectory();
  if (!entries) return Fail(entries.error());
  ScanContainers(*entries, BootTime());
  SortByPid(*entries);
  return entries;
}

Result<std::vector<SocketEntry>> TargetDiscovery::ScanSocketDirectory() const {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(socket_dir_.c_str()), &::closedir);
  if (!dir) {
    if (errno == ENOENT) return std::vector<SocketEntry>{};
    const ErrorCode code = errno == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kInternal;
    return Fail(code, "cannot read socket directory " + socket_dir_ + ": " + std::strerror(errno));
  }
  const std::optional<int64_t> boot_time = BootTime();
  std::vector<SocketEntry> entries;
  while (const dirent* d = ::readdir(dir.get())) {
    const auto pid = PidFromSocketName(d->d_name);
    if (!pid) continue;
    const std::string path = socket_dir_ + "/" + d->d_name;
    if (auto file = StatSocket(path)) entries.push_back(MakeEntry(*pid, path, *file, boot_time));
  }
  SortByPid(entries);
  return entries;
}

// Processes whose agent put its socket inside their own mount namespace.
void TargetDiscovery::ScanContainers(std::vector<SocketEntry>& entries,
                                     std::optional<int64_t> boot_time) const {
  std::set<pid_t> seen;
  for (const SocketEntry& e : entries) seen.insert(e.target.pid);
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir(proc_root_.c_str()), &::closedir);
  if (!proc) return;
  while (const dirent* d = ::readdir(proc.get())) {
    const auto pid = PidFromDirName(d->d_name);
    if (!pid || seen.contains(*pid)) continue;
    auto path = ContainerSocket(*pid);
    if (!path) continue;
    auto file = StatSocket(*path);
    if (!file) continue;
    entries.push_back(MakeEntry(*pid, *path, *file, boot_time));
    entries.back().in_container = true;
  }
}

// /proc/<pid>/root/<dir>/<nspid>.sock when the process lives in another mount
// namespace or a nested pid namespace and that socket exists.
std::optional<std::string> TargetDiscovery::ContainerSocket(pid_t pid) const {
  auto path = ContainerSocketPath(pid);
  if (!path || !IsSocket(*path)) return std::nullopt;
  return path;
}

// Where the socket of a process in another mount or pid namespace would be.
std::optional<std::string> TargetDiscovery::ContainerSocketPath(pid_t pid) const {
  const auto mine = ReadLink(proc_root_ + "/self/ns/mnt");
  const auto theirs = ReadLink(ProcPath(pid, "ns/mnt"));
  // Same mount namespace: the socket, if any, is in our own directory.
  if (mine && theirs && *mine == *theirs) return std::nullopt;
  const bool other_mount_ns = mine && theirs;
  pid_t ns_pid = pid;
  if (auto status = ReadStatus(pid); status && !status->ns_pids.empty()) {
    ns_pid = status->ns_pids.back();
  }
  if (!other_mount_ns && ns_pid == pid) return std::nullopt;
  auto inner = SocketPathForPid(socket_dir_, ns_pid);
  if (!inner) return std::nullopt;
  return ProcPath(pid, "root") + *inner;
}

Result<Target> TargetDiscovery::Resolve(pid_t pid) const {
  return pid > 0 ? ResolvePid(pid) : ResolveOnlyAgent();
}

Result<Target> TargetDiscovery::Resolve(const TargetSelector& selector) const {
  if (selector.resolved) return *selector.resolved;
  if (selector.pid > 0 && !selector.name.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "--pid and --name cannot be used together");
  }
  if (!selector.name.empty()) return ResolveName(selector.name);
  return Resolve(selector.pid);
}

// The live agents whose command name or line matches `pattern` (all of
// them for an empty pattern).
Result<std::vector<SocketEntry>> TargetDiscovery::Matching(const std::string& pattern) const {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Fail(ErrorCode::kInvalidArgument,
                "--name '" + pattern + "' is not a valid regular expression: " + e.what());
  }
  auto entries = Scan();
  if (!entries) return Fail(entries.error());
  std::vector<SocketEntry> matches;
  for (const SocketEntry& e : *entries) {
    if (e.process_exists && (pattern.empty() || std::regex_search(e.target.command, re) ||
                             std::regex_search(JoinCommandLine(e), re))) {
      matches.push_back(e);
    }
  }
  return matches;
}

Result<std::vector<pid_t>> TargetDiscovery::LivePids(const std::string& pattern) const {
  auto matches = Matching(pattern);
  if (!matches) return Fail(matches.error());
  std::vector<pid_t> pids;
  for (const SocketEntry& e : *matches) pids.push_back(e.target.pid);
  return pids;
}

Result<Target> TargetDiscovery::ResolveName(const std::string& pattern) const {
  auto matches = Matching(pattern);
  if (!matches) return Fail(matches.error());
  if (matches->size() == 1) {
    if (!matches->front().untrusted.empty()) {
      return Fail(ErrorCode::kPermissionDenied, matches->front().untrusted);
    }
    return matches->front().target;
  }
  if (matches->empty()) {
    return Fail(ErrorCode::kNotFound, "no process with a memprof agent matches --name '" +
                                          pattern + "' (searched " + socket_dir_ +
                                          "; `memprofctl list` shows the agents)");
  }
  return Fail(ErrorCode::kInvalidArgument,
              std::to_string(matches->size()) + " processes with a memprof agent match --name '" +
                  pattern + "'; choose one with --pid, or add --all for every one: " +
                  JoinCandidates(*matches));
}

Result<Target> TargetDiscovery::ResolveSocketPath(const std::string& path) const {
  uid_t owner = 0;
  if (!IsSocket(path, &owner)) {
    return Fail(ErrorCode::kNotFound, "no memprof agent socket at " + path);
  }
  auto fd = ConnectUnixSocket(path, std::chrono::seconds(5));
  if (!fd) {
    if (fd.error().code == ErrorCode::kUnavailable) {
      return Fail(ErrorCode::kUnavailable,
                  "stale socket " + path + ": nobody is listening (its agent stopped)");
    }
    return Fail(fd.error());
  }
  auto peer = GetPeerCredentials(fd->get());
  if (!peer) return Fail(peer.error());
  auto status = ReadStatus(peer->pid);
  if (!status) return Fail(status.error());
  std::string untrusted = UntrustedSocketReason(path, owner, peer->pid, status->effective_uid);
  if (!untrusted.empty()) return Fail(ErrorCode::kPermissionDenied, untrusted);
  return Target{peer->pid, path, status->name};
}

Result<Target> TargetDiscovery::ResolvePid(pid_t pid) const {
  auto status = ReadStatus(pid);
  if (!status) {
    if (status.error().code == ErrorCode::kNotFound) {
      return Fail(ErrorCode::kNotFound, "no process with pid " + std::to_string(pid));
    }
    return Fail(status.error());
  }
  auto path = SocketPathForPid(socket_dir_, pid);
  if (!path) return Fail(path.error());
  Target target{pid, *path, status->name};
  // A process in another mount or pid namespace (a container, PrivateTmp)
  // has its socket under its own root, named after its own pid; a socket of
  // that pid in our own directory would belong to some earlier process.
  if (auto inner = ContainerSocket(pid)) target.socket_path = *inner;
  uid_t owner = 0;
  if (IsSocket(target.socket_path, &owner)) {
    std::string untrusted =
        UntrustedSocketReason(target.socket_path, owner, pid, status->effective_uid);
    if (!untrusted.empty()) return Fail(ErrorCode::kPermissionDenied, untrusted);
    return target;
  }
  const std::string who = "process " + std::to_string(pid) + " (" + status->name + ")";
  if (IsKernelThread(ReadTextFile(ProcPath(pid, "status")).value_or(""), *status)) {
    return Fail(ErrorCode::kNotFound,
                who + " is a kernel thread: it has no user-space heap to profile; pick a "
                      "program (`memprofctl list` shows the processes with an agent)");
  }
  if (const std::string what = NonSocketKind(*path); !what.empty()) {
    return Fail(ErrorCode::kNotFound, who + " has no memprof agent: " + *path + " is " + what +
                                          ", not a socket (remove it if it is left over); " +
                                          HowToGetAnAgent(pid));
  }
  // Loaded or not, and why it does not serve here: what /proc tells.
  return Fail(DiagnoseMissingSocket(proc_root_, pid, socket_dir_,
                                    ContainerSocketPath(pid).value_or(*path)));
}

Result<Target> TargetDiscovery::ResolveOnlyAgent() const {
  auto entries = Scan();
  if (!entries) return Fail(entries.error());
  std::vector<SocketEntry> live;
  std::copy_if(entries->begin(), entries->end(), std::back_inserter(live),
               [](const SocketEntry& e) { return e.process_exists; });
  if (live.size() == 1) {
    if (!live.front().untrusted.empty()) {
      return Fail(ErrorCode::kPermissionDenied, live.front().untrusted);
    }
    return live.front().target;
  }
  if (live.empty()) {
    std::string msg = "no memprof agents found in " + socket_dir_;
    if (!entries->empty()) msg += " (only stale sockets of exited processes)";
    return Fail(ErrorCode::kNotFound, msg + "; " + kHowToGetAnAgent);
  }
  return Fail(ErrorCode::kInvalidArgument, std::to_string(live.size()) +
                                               " memprof agents found in " + socket_dir_ +
                                               "; choose one with --pid, or use --all for every one: " +
                                               JoinCandidates(live));
}

}  // namespace memprof::cli
