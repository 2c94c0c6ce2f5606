#ifndef MEMPROF_CLI_CLIENT_AGENT_FACTS_H_
#define MEMPROF_CLI_CLIENT_AGENT_FACTS_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace memprof::cli {

// What a process's memory map says about memprof: whether the agent's core
// (libmemprof_agent.so) and its server module are loaded, and from where.
struct AgentMapping {
  std::string core_path;      // as mapped, without " (deleted)"; empty when not mapped
  bool core_deleted = false;  // the file was removed or replaced after it was mapped
  std::string server_path;    // libmemprof_agent_server.so as mapped; empty when not
};

// The file names of the two shared objects, as module_loader.cc knows them.
inline constexpr char kAgentCoreFile[] = "libmemprof_agent.so";
inline constexpr char kAgentServerFile[] = "libmemprof_agent_server.so";
// The two as mapped after `memprofctl attach` brought them through memfds
// (the process did not see the installed files).
inline constexpr char kAgentCoreMemfd[] = "/memfd:memprof-agent";
inline constexpr char kAgentServerMemfd[] = "/memfd:memprof-agent-server";

// The user a process runs as, for judging what it may write.
struct ProcessCredentials {
  uid_t real_uid = 0;
  uid_t effective_uid = 0;
  gid_t effective_gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
};

// What memprofctl can learn about a process's agent from outside, without
// connecting: its credentials (/proc/<pid>/status, readable by everyone),
// its memory map and the environment it started with (readable only by its
// user and root, and by root alone once it changed its user). Each part that
// could not be read carries why, so that messages say what was not checked.
struct AgentFacts {
  pid_t pid = 0;
  std::string name;  // comm
  std::optional<ProcessCredentials> credentials;
  std::optional<AgentMapping> mapping;
  std::string mapping_error;  // why `mapping` is unset
  // The variables that steer the agent (MEMPROF_*) and LD_PRELOAD.
  std::optional<std::map<std::string, std::string>> environment;
  std::string environment_error;  // why `environment` is unset
  std::string executable;         // /proc/<pid>/exe; empty when unreadable

  // The value of `name` in the environment, or "" (also when unread).
  std::string Env(const std::string& name) const;
};

// The agent's shared objects among the lines of /proc/<pid>/maps.
AgentMapping ParseAgentMapping(std::string_view maps);

// The MEMPROF_* variables and LD_PRELOAD of /proc/<pid>/environ
// (NUL-separated NAME=VALUE); nothing else is kept.
std::map<std::string, std::string> ParseAgentEnvironment(std::string_view environ);

// The credentials in the text of /proc/<pid>/status. kInternal without Uid:.
[[nodiscard]] Result<ProcessCredentials> ParseCredentials(std::string_view status);

// Reads the facts of `pid` under `proc_root` ("/proc"). Never fails: what
// cannot be read stays unset, with the reason.
AgentFacts ReadAgentFacts(const std::string& proc_root, pid_t pid);

// What lstat() says about a path, or the errno that stopped it.
struct PathFacts {
  std::string path;
  int error = 0;  // 0: `st` is valid
  struct stat st {};
};
PathFacts StatPath(const std::string& path);

// Whether a process with `credentials` may create files in a directory with
// `st` (write and search permission, by the mode bits; root may).
bool MayWriteDirectory(const struct stat& st, const ProcessCredentials& credentials);

// "uid 105 (bind)", or "root".
std::string DescribeUid(uid_t uid);

// "0700".
std::string ModeText(mode_t mode);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_AGENT_FACTS_H_
