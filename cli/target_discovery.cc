#include "cli/target_discovery.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "common/socket_path.h"

namespace memprof::cli {
namespace {

constexpr char kHowToGetAnAgent[] =
    "a program gets an agent when started with `memprofctl run -- CMD`, with "
    "LD_PRELOAD=libmemprof_agent.so, or by calling memprof_agent_start()";

bool IsSocket(const std::string& path, uid_t* owner = nullptr) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  if (owner != nullptr) *owner = st.st_uid;
  return true;
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

SocketEntry TargetDiscovery::MakeEntry(pid_t pid, const std::string& path, uid_t owner) const {
  SocketEntry entry;
  entry.target.pid = pid;
  entry.target.socket_path = path;
  entry.uid = owner;
  if (auto status = ReadStatus(pid)) {
    entry.process_exists = true;
    entry.target.command = status->name;
    entry.uid = status->real_uid;
    if (auto cmdline = ReadTextFile(ProcPath(pid, "cmdline"))) {
      entry.cmdline = ParseCmdline(*cmdline);
    }
  }
  return entry;
}

Result<std::vector<SocketEntry>> TargetDiscovery::Scan() const {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(socket_dir_.c_str()), &::closedir);
  if (!dir) {
    if (errno == ENOENT) return std::vector<SocketEntry>{};
    const ErrorCode code = errno == EACCES ? ErrorCode::kPermissionDenied : ErrorCode::kInternal;
    return Fail(code, "cannot read socket directory " + socket_dir_ + ": " + std::strerror(errno));
  }
  std::vector<SocketEntry> entries;
  while (const dirent* d = ::readdir(dir.get())) {
    const auto pid = PidFromSocketName(d->d_name);
    const std::string path = socket_dir_ + "/" + d->d_name;
    uid_t owner = 0;
    if (pid && IsSocket(path, &owner)) entries.push_back(MakeEntry(*pid, path, owner));
  }
  std::sort(entries.begin(), entries.end(),
            [](const SocketEntry& a, const SocketEntry& b) { return a.target.pid < b.target.pid; });
  return entries;
}

Result<Target> TargetDiscovery::Resolve(pid_t pid) const {
  return pid > 0 ? ResolvePid(pid) : ResolveOnlyAgent();
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
  if (IsSocket(*path)) return target;
  // A process in another mount or pid namespace (a container, PrivateTmp)
  // has its socket under its own root, named after its own pid.
  const pid_t ns_pid = status->ns_pids.empty() ? pid : status->ns_pids.back();
  auto inner = SocketPathForPid(socket_dir_, ns_pid);
  if (inner && IsSocket(ProcPath(pid, "root") + *inner)) {
    target.socket_path = ProcPath(pid, "root") + *inner;
    return target;
  }
  return Fail(ErrorCode::kNotFound, "process " + std::to_string(pid) + " (" + status->name +
                                        ") has no memprof agent (no socket at " + *path + "); " +
                                        kHowToGetAnAgent);
}

Result<Target> TargetDiscovery::ResolveOnlyAgent() const {
  auto entries = Scan();
  if (!entries) return Fail(entries.error());
  std::vector<SocketEntry> live;
  std::copy_if(entries->begin(), entries->end(), std::back_inserter(live),
               [](const SocketEntry& e) { return e.process_exists; });
  if (live.size() == 1) return live.front().target;
  if (live.empty()) {
    std::string msg = "no memprof agents found in " + socket_dir_;
    if (!entries->empty()) msg += " (only stale sockets of exited processes)";
    return Fail(ErrorCode::kNotFound, msg + "; " + kHowToGetAnAgent);
  }
  return Fail(ErrorCode::kInvalidArgument, std::to_string(live.size()) +
                                               " memprof agents found in " + socket_dir_ +
                                               "; choose one with --pid: " + JoinCandidates(live));
}

}  // namespace memprof::cli
