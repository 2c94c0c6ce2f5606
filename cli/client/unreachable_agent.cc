#include "cli/client/unreachable_agent.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>

#include "common/agent_environment.h"
#include "common/path.h"
#include "common/socket_path.h"
#include "common/text_file.h"

namespace memprof::cli {

std::string HowToGetAnAgent(pid_t pid) {
  std::string text = kHowToGetAnAgent;
  const std::string placeholder = "--pid PID";
  text.replace(text.find(placeholder), placeholder.size(), "--pid " + std::to_string(pid));
  return text;
}
namespace {

std::string Who(const AgentFacts& f) {
  const std::string pid = "process " + std::to_string(f.pid);
  return f.name.empty() ? pid : pid + " (" + f.name + ")";
}

std::string NotServing(const AgentFacts& f) {
  return Who(f) + ": memprof agent loaded but not serving: ";
}

// "(owned by root, mode 0700)", or "" when the directory could not be read.
std::string Ownership(const PathFacts& dir) {
  if (dir.error != 0) return "";
  return " (owned by " + DescribeUid(dir.st.st_uid) + ", mode " + ModeText(dir.st.st_mode) + ")";
}

bool SwitchedOff(const AgentFacts& f) { return AgentSwitchedOff(f.Env(kAgentSwitchEnv)); }

// A program exec'd by a profiled process (or its forked child) finds that
// process's pid in MEMPROF_HOST_PID, and its agent does nothing unless
// MEMPROF_CHILDREN=inherit (agent/core/agent_api.cc).
bool ExecdByProfiledProcess(const AgentFacts& f) {
  const std::string host = f.Env(kHostPidEnv);
  return !host.empty() && ExecdByAnotherHost(host.c_str(), f.pid) &&
         !ChildrenInherit(f.Env(kChildrenEnv));
}

bool Preloaded(const AgentFacts& f) {
  return f.Env("LD_PRELOAD").find("libmemprof_agent") != std::string::npos;
}

// The socket directory the agent uses, as its configuration reads it.
std::string AgentDirectory(const AgentFacts& f, const std::string& fallback) {
  if (!f.environment) return fallback;
  return SocketDirectoryFrom(f.Env(kSocketDirEnv));
}

// memprofctl itself may not enter the socket directory.
Error ShutOut(const std::string& path, const PathFacts& dir, uid_t caller) {
  return Error(ErrorCode::kPermissionDenied,
               "permission denied looking for " + path + ": memprofctl runs as " +
                   DescribeUid(caller) + ", which may not enter " + dir.path + Ownership(dir) +
                   "; run memprofctl as root or as the directory's owner");
}

Error NotLoaded(const MissingSocket& m) {
  return Error(ErrorCode::kNotFound, Who(m.facts) + " has no memprof agent (no socket at " +
                                         m.socket_path + ", and no " + kAgentCoreFile +
                                         " in its memory map); " + HowToGetAnAgent(m.facts.pid));
}

// What a user who may not read a process's files can do: ask root. Root
// itself is refused only for a process beyond its reach.
std::string WhoMayRead(uid_t caller) {
  return caller == 0 ? "; memprofctl runs as root and still may not: the process is in another "
                       "user namespace, or a security module restricts reading it"
                     : "; only the process's user and root may, and only root once the process "
                       "changed its user";
}

std::string FindOut(uid_t caller) {
  return caller == 0 ? "" : "; run memprofctl as root to find out";
}

Error Unknowable(const MissingSocket& m) {
  return Error(ErrorCode::kNotFound,
               Who(m.facts) + " has no socket at " + m.socket_path +
                   ", and memprofctl cannot tell whether it loaded the memprof agent: it may not "
                   "read /proc/" +
                   std::to_string(m.facts.pid) + "/maps (" + m.facts.mapping_error +
                   WhoMayRead(m.caller) + ")" + FindOut(m.caller) +
                   ". Without an agent: " + HowToGetAnAgent(m.facts.pid));
}

std::optional<Error> EnvironmentReason(const MissingSocket& m) {
  const AgentFacts& f = m.facts;
  if (!f.environment) return std::nullopt;
  if (SwitchedOff(f)) {
    return Error(ErrorCode::kNotFound, NotServing(f) + "MEMPROF_AGENT=" + f.Env("MEMPROF_AGENT") +
                                           " in its environment switches it off; restart the "
                                           "process without it");
  }
  if (ExecdByProfiledProcess(f)) {
    const std::string host = f.Env("MEMPROF_HOST_PID");
    return Error(ErrorCode::kNotFound,
                 NotServing(f) + "it was exec'd by profiled process " + host +
                     " (or a child of it) and inherited its LD_PRELOAD, and with "
                     "MEMPROF_CHILDREN=none (the default) such a program's agent stays off; "
                     "profile pid " +
                     host + ", or restart it with MEMPROF_CHILDREN=inherit");
  }
  if (m.agent_dir != m.socket_dir && m.socket_in_agent_dir) {
    return Error(ErrorCode::kNotFound,
                 Who(f) + ": memprof agent serves in " + m.agent_dir +
                     " (MEMPROF_SOCKET_DIR in its environment), not in " + m.socket_dir +
                     "; use MEMPROF_SOCKET_DIR=" + m.agent_dir + " memprofctl ...");
  }
  return std::nullopt;
}

// When the environment is unknown, the directory judged is memprofctl's own.
std::string Assumption(const MissingSocket& m) {
  if (m.facts.environment) return "";
  return " (if it uses " + m.agent_dir + " too: memprofctl may not read its environment, " +
         m.facts.environment_error + ")";
}

std::optional<Error> DirectoryProblem(const MissingSocket& m) {
  const AgentFacts& f = m.facts;
  const std::string& dir = m.agent_dir;
  const std::string restart = "; restart the process with a MEMPROF_SOCKET_DIR that works";
  if (dir.empty() || dir.front() != '/') {
    return Error(ErrorCode::kFailedPrecondition,
                 NotServing(f) + "its MEMPROF_SOCKET_DIR '" + dir +
                     "' is not an absolute path, which the agent refuses" + restart);
  }
  if (m.agent_dir_facts.error == ENOENT) {
    return Error(ErrorCode::kFailedPrecondition,
                 NotServing(f) + "socket directory " + dir +
                     " does not exist (the agent creates only its last component, so the parent "
                     "must exist; or it was removed after the agent started)" +
                     Assumption(m) + restart);
  }
  if (m.agent_dir_facts.error != 0 || !f.credentials) return std::nullopt;
  const uid_t user = f.credentials->effective_uid;
  if (auto safe = CheckSocketDirectory(m.agent_dir_facts.st, user, dir); !safe) {
    std::string why = safe.error().message;  // as the agent logs it
    if (constexpr std::string_view kRefusing = "; refusing to use it"; why.ends_with(kRefusing)) {
      why.resize(why.size() - kRefusing.size());
    }
    return Error(ErrorCode::kFailedPrecondition,
                 NotServing(f) + why + ", so the agent refused it" + Assumption(m) +
                     "; fix the directory or choose another MEMPROF_SOCKET_DIR, and restart the "
                     "process");
  }
  if (!MayWriteDirectory(m.agent_dir_facts.st, *f.credentials)) {
    return Error(ErrorCode::kFailedPrecondition,
                 NotServing(f) + "socket directory " + dir + " is not writable by " +
                     DescribeUid(user) + ", the user it runs as" + Ownership(m.agent_dir_facts) +
                     Assumption(m) + "; give it a directory that user may write to (the default " +
                     kDefaultSocketDir + " is open to every user) and restart it");
  }
  return std::nullopt;
}

// Started by a preloaded library, or by the program that links it.
std::string NotRunning(const MissingSocket& m) {
  const AgentFacts& f = m.facts;
  std::string why =
      Preloaded(f)
          ? "neither its environment nor its socket directory " + m.agent_dir +
                " explains why (a forked child publishes its socket 200 ms after fork())"
          : "the program links " + std::string(kAgentCoreFile) +
                " and its agent is not running: memprof_agent_start() was not called or failed, "
                "or memprof_agent_stop() stopped it";
  if (ForkSwitchedOff(f.Env(kForkEnv))) {
    why += "; MEMPROF_FORK=off in its environment gives a forked child no agent of its own";
  }
  return why + "; with MEMPROF_LOG_LEVEL=info in its environment the agent logs why on its stderr";
}

Error Unexplained(const MissingSocket& m) {
  const AgentFacts& f = m.facts;
  std::string why;
  if (!f.environment) {
    why = "memprofctl may not read its environment (/proc/" + std::to_string(f.pid) +
          "/environ: " + f.environment_error +
          "), which may switch it off or name another MEMPROF_SOCKET_DIR" + FindOut(m.caller);
  } else if (m.agent_dir_facts.error != 0) {
    why = "memprofctl could not inspect its socket directory " + m.agent_dir + " (" +
          std::strerror(m.agent_dir_facts.error) + ")" + FindOut(m.caller);
  } else {
    why = NotRunning(m);
  }
  return Error(ErrorCode::kNotFound, NotServing(f) + "no socket at " + m.socket_path + "; " + why);
}

// "/proc/N/root" when the socket path is seen through a container's root,
// else "": the agent's directory is looked at the same way.
std::string RootPrefix(const std::string& socket_path, const std::string& socket_dir) {
  const std::string tail = socket_dir + "/" + std::string(PathBasename(socket_path));
  if (!socket_path.ends_with(tail)) return "";
  return socket_path.substr(0, socket_path.size() - tail.size());
}

Error WithNote(const Error& error, const std::string& note) {
  return Error(error.code, error.message + "; " + note);
}

std::string LogHint() { return "the process logs why when started with MEMPROF_LOG_LEVEL=error"; }

// The core is loaded and its module is not: it failed to load it.
Error ModuleNotLoaded(const DroppedConnections& d) {
  const AgentFacts& f = d.facts;
  // A core replaced on disk since it was mapped (an upgrade) looks for its
  // module beside the new files, which may be another version's.
  const std::string replaced = f.mapping->core_deleted ? " (" + f.mapping->core_path +
                                                             " was replaced or removed after the "
                                                             "process started)"
                                                       : "";
  const std::string head = "the memprof agent of " + Who(f) +
                           " closes every connection: it could not load its server module " +
                           d.module_path + replaced;
  const bool configured = !f.Env("MEMPROF_SERVER_LIBRARY").empty();
  if (d.module.error == ENOENT) {
    return Error(ErrorCode::kFailedPrecondition,
                 head + ": no such file (the agent looks for it " +
                     (configured ? std::string("at MEMPROF_SERVER_LIBRARY") : "beside itself") +
                     "); install " + kAgentServerFile + " there (it ships with " + kAgentCoreFile +
                     "), or set MEMPROF_SERVER_LIBRARY to its path in the "
                     "process's environment, and restart the process");
  }
  const std::string user = f.credentials ? DescribeUid(f.credentials->effective_uid) : "its user";
  return Error(ErrorCode::kFailedPrecondition,
               head + ": the file is there but did not load (not readable by " + user +
                   ", a library it needs is missing (`ldd " + d.module_path +
                   "` shows which), or it is from another memprof version); " + LogHint());
}

// The agent runs and listens, but its socket file was removed (with its
// directory, or alone): it publishes it again when it next wakes up
// (agent/core/connection_acceptor.cc), which a client cannot cause.
Error RemovedSocketFile(const MissingSocket& m) {
  const std::string path = m.agent_dir + "/" + std::string(PathBasename(m.socket_path));
  const std::string what = m.agent_dir_facts.error == ENOENT
                               ? "with its directory " + m.agent_dir
                               : "from " + m.agent_dir;
  return Error(ErrorCode::kUnavailable,
               Who(m.facts) + ": memprof agent running but unreachable: its socket " + path +
                   " was removed (" + what +
                   ") while the agent listened on it, and nothing can connect through a removed "
                   "socket file; the agent publishes it again the next time it wakes up (when the "
                   "process forks, or a client session ends), else restart the process");
}

}  // namespace

std::vector<uint64_t> ListeningSocketsUnder(std::string_view net_unix, std::string_view dir) {
  // "Num: RefCount Protocol Flags Type St Inode Path"; Flags 00010000 is a
  // listening socket. The path is the rest of the line (it may hold spaces).
  constexpr std::string_view kListening = "00010000";
  std::vector<uint64_t> inodes;
  size_t start = 0;
  while (start < net_unix.size()) {
    size_t end = net_unix.find('\n', start);
    if (end == std::string_view::npos) end = net_unix.size();
    const std::string_view line = net_unix.substr(start, end - start);
    start = end + 1;
    size_t pos = 0;
    std::string_view fields[7];
    bool complete = true;
    for (std::string_view& field : fields) {
      while (pos < line.size() && line[pos] == ' ') ++pos;
      const size_t next = line.find(' ', pos);
      if (next == std::string_view::npos) {
        complete = false;
        break;
      }
      field = line.substr(pos, next - pos);
      pos = next + 1;
    }
    if (!complete || fields[3] != kListening) continue;
    const std::string_view path = line.substr(pos);
    if (path.size() <= dir.size() + 1 || !path.starts_with(dir) || path[dir.size()] != '/') continue;
    uint64_t inode = 0;
    auto [ptr, ec] = std::from_chars(fields[6].data(), fields[6].data() + fields[6].size(), inode);
    if (ec == std::errc() && ptr == fields[6].data() + fields[6].size()) inodes.push_back(inode);
  }
  return inodes;
}

namespace {

// Whether a thread of process `pid` holds one of `inodes` ("socket:[N]" in
// /proc/<pid>/task/<tid>/fd: the agent's sockets are in a descriptor table
// of their own, not the main thread's).
bool HoldsSocket(const std::string& proc_root, pid_t pid, const std::vector<uint64_t>& inodes) {
  std::set<std::string> wanted;
  for (uint64_t inode : inodes) wanted.insert("socket:[" + std::to_string(inode) + "]");
  std::error_code ec;
  const std::string tasks = proc_root + "/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    for (const auto& fd : std::filesystem::directory_iterator(task.path() / "fd", ec)) {
      const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
      if (!ec && wanted.contains(target)) return true;
    }
  }
  return false;
}

}  // namespace

Error ExplainMissingSocket(const MissingSocket& m) {
  if (m.socket.error == EACCES) return ShutOut(m.socket_path, m.looked_in, m.caller);
  if (!m.facts.mapping) return Unknowable(m);
  if (m.facts.mapping->core_path.empty()) return NotLoaded(m);
  if (auto reason = EnvironmentReason(m)) return *reason;
  if (m.listening_on_removed_file) return RemovedSocketFile(m);
  if (auto problem = DirectoryProblem(m)) return *problem;
  return Unexplained(m);
}

Error DiagnoseMissingSocket(const std::string& proc_root, pid_t pid, const std::string& socket_dir,
                            const std::string& socket_path) {
  MissingSocket m;
  m.facts = ReadAgentFacts(proc_root, pid);
  m.socket_dir = socket_dir;
  m.socket_path = socket_path;
  m.socket = StatPath(socket_path);
  const std::string root = RootPrefix(socket_path, socket_dir);
  m.looked_in = StatPath(root + socket_dir);
  m.looked_in.path = socket_dir;
  m.agent_dir = AgentDirectory(m.facts, socket_dir);
  if (!m.agent_dir.empty() && m.agent_dir.front() == '/') {
    m.agent_dir_facts = StatPath(root + m.agent_dir);
    const std::string name(PathBasename(socket_path));
    const PathFacts other = StatPath(root + m.agent_dir + "/" + name);
    m.socket_in_agent_dir = other.error == 0 && S_ISSOCK(other.st.st_mode);
    if (!m.socket_in_agent_dir) {
      auto net_unix = ReadTextFile(proc_root + "/" + std::to_string(pid) + "/net/unix");
      const std::vector<uint64_t> inodes =
          net_unix ? ListeningSocketsUnder(*net_unix, m.agent_dir) : std::vector<uint64_t>();
      m.listening_on_removed_file = !inodes.empty() && HoldsSocket(proc_root, pid, inodes);
    }
  }
  m.caller = ::geteuid();
  return ExplainMissingSocket(m);
}

Error ExplainDeniedSocket(const DeniedSocket& d) {
  const std::string head = "permission denied connecting to " + d.socket_path;
  if (d.socket.error == EACCES) return ShutOut(d.socket_path, d.directory, d.caller);
  if (d.socket.error != 0 || !d.credentials) {
    return Error(ErrorCode::kPermissionDenied,
                 head +
                     " (the agent's socket is private to the target's user; run as that user "
                     "or root)");
  }
  const uid_t owner = d.socket.st.st_uid;
  const uid_t user = d.credentials->effective_uid;
  const std::string pid = std::to_string(d.pid);
  if (owner == 0 && user != 0) {
    return Error(ErrorCode::kPermissionDenied,
                 head + ": the socket is owned by root: the agent of pid " + pid +
                     " published it while the process ran as root, and the process has since "
                     "dropped to " +
                     DescribeUid(user) + (d.caller == user ? ", the user memprofctl runs as" : "") +
                     "; a socket keeps the owner it was made with, so only root may connect: run "
                     "memprofctl as root (or start the service as that user from the outset, so "
                     "that its agent publishes as it)");
  }
  if (owner != user) {
    return Error(ErrorCode::kPermissionDenied,
                 head + ": the socket belongs to " + DescribeUid(owner) + " and pid " + pid +
                     " runs as " + DescribeUid(user) + "; run memprofctl as root");
  }
  return Error(ErrorCode::kPermissionDenied,
               head + ": the socket belongs to " + DescribeUid(owner) + ", the user pid " + pid +
                   " runs as, and only that user and root may use it; run memprofctl as " +
                   (owner == 0 ? std::string("root") : "that user or as root"));
}

Error DiagnoseDeniedSocket(const std::string& proc_root, pid_t pid,
                           const std::string& socket_path) {
  DeniedSocket d;
  d.pid = pid;
  d.socket_path = socket_path;
  d.socket = StatPath(socket_path);
  d.directory = StatPath(PathDirname(socket_path));
  if (auto status = ReadTextFile(proc_root + "/" + std::to_string(pid) + "/status")) {
    if (auto credentials = ParseCredentials(*status)) d.credentials = *credentials;
  }
  d.caller = ::geteuid();
  return ExplainDeniedSocket(d);
}

std::string ServerModulePath(const AgentFacts& f) {
  if (const std::string configured = f.Env("MEMPROF_SERVER_LIBRARY"); !configured.empty()) {
    return configured;
  }
  std::string object = f.mapping ? f.mapping->core_path : "";
  if (object.empty()) object = f.executable;  // a core linked into the program
  if (object.ends_with(" (deleted)")) object.resize(object.size() - 10);
  if (object.empty() || object.front() != '/') return "";
  return PathDirname(object) + "/" + kAgentServerFile;
}

Error ExplainDroppedConnections(const DroppedConnections& d, const Error& error) {
  const AgentFacts& f = d.facts;
  if (!f.mapping) {
    return WithNote(error,
                    "memprofctl could not check whether its server module is missing "
                    "(it may not read /proc/" +
                        std::to_string(f.pid) + "/maps: " + f.mapping_error + "); " + LogHint());
  }
  if (!f.mapping->server_path.empty()) {
    return WithNote(error,
                    "its server module " + f.mapping->server_path + " is loaded; " + LogHint());
  }
  if (d.module_path.empty()) {
    return WithNote(error,
                    "memprofctl could not tell where its server module should be; " + LogHint());
  }
  if (d.module.error != 0 && d.module.error != ENOENT) {
    return WithNote(error, "memprofctl could not check its server module " + d.module_path + " (" +
                               std::strerror(d.module.error) + "); " + LogHint());
  }
  if (f.mapping->core_path.empty()) {
    // Something serves the socket, but not a preloaded or shared core: a
    // core linked into the program, or something else altogether.
    return WithNote(error, "there is no " + std::string(kAgentCoreFile) +
                               " in its memory map; an agent linked into the program looks for "
                               "its server module at " +
                               d.module_path + ", which " +
                               (d.module.error == ENOENT ? "does not exist" : "exists") + "; " +
                               LogHint());
  }
  return ModuleNotLoaded(d);
}

Error DiagnoseDroppedConnections(const std::string& proc_root, pid_t pid, const Error& error) {
  DroppedConnections d;
  d.facts = ReadAgentFacts(proc_root, pid);
  d.module_path = ServerModulePath(d.facts);
  if (!d.module_path.empty()) {
    // As the process sees the path: through its root (a container's).
    const std::string process = proc_root + "/" + std::to_string(pid);
    d.module =
        StatPath(process + (d.module_path.front() == '/' ? "/root" : "/cwd/") + d.module_path);
    if (d.module.error == EACCES) d.module = StatPath(d.module_path);
  }
  return ExplainDroppedConnections(d, error);
}

}  // namespace memprof::cli
