#ifndef MEMPROF_CLI_COMMANDS_LIST_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_LIST_COMMAND_H_

#include <memory>
#include <sys/types.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/targets/stale_socket.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl list [--json] [--no-prune]`: every process with an agent
// socket, and its state. By default it removes the sockets it can prove
// stale (cli/targets/stale_socket.h) instead of listing them; --no-prune lists them.
struct ListOptions {
  bool json = false;
  bool prune = true;
};

// One line of `list`; the fields of an unreachable agent keep their zero
// values ("unknown" allocator) and `problem` says why.
struct ListRow {
  pid_t pid = 0;
  pid_t ppid = 0;  // 0 when the process is gone or its parent is unknown
  uid_t uid = 0;   // effective, as `status` shows it
  uid_t real_uid = 0;  // differs after seteuid()/setresuid()
  std::string user;    // of `uid`
  std::string command;
  std::string allocator = "unknown";
  std::string profiling = "-";  // see ProfilingState()
  bool profiling_enabled = false;
  bool profiling_active = false;
  std::string sampler;  // StatusResponse.sampler: "jemalloc", "tcmalloc", "memprof" or ""
  std::string agent_version;
  std::string socket;
  bool in_container = false;  // found under /proc/<pid>/root
  bool stale = false;         // provably left over (stale_reason says why)
  // Always false on output: removed sockets are no longer listed. Kept so
  // that the JSON shape stays what scripts were written against.
  bool removed = false;
  std::string problem;  // "" when the agent answered
  StaleReason stale_reason = StaleReason::kNone;
};

CLI::App* RegisterListCommand(CLI::App& app, ListOptions& options);

// Asks each live agent for its Status; stale sockets and unreachable agents
// become rows with a problem, not errors. With options.prune, the stale
// sockets `caller` may remove are removed and left out (logged at -v).
[[nodiscard]] Result<void> RunList(const ListOptions& options, TargetDiscovery& discovery,
                                   ProfileClient& client, std::ostream& out,
                                   uid_t caller = ::geteuid());

// The row of one socket, and whether it is stale. Contacts the agent only
// when its process exists and the socket can be trusted.
ListRow BuildListRow(const SocketEntry& entry, ProfileClient& client,
                     const TargetDiscovery& discovery);

// Removes the socket of a stale row when `caller` may (WhyNotRemovable);
// true when it is gone. Otherwise the row's problem says why it stays.
bool PruneRow(ListRow& row, const SocketEntry& entry, uid_t caller);

// The rows in family order, each with its depth: a row whose parent is also
// listed comes right after that parent (depth + 1), in pid order among
// siblings; the others are roots (depth 0), in pid order.
std::vector<std::pair<const ListRow*, int>> FamilyOrder(const std::vector<ListRow>& rows);

nlohmann::json ListToJson(const std::vector<ListRow>& rows, const std::string& socket_dir);

void PrintList(const std::vector<ListRow>& rows, const std::string& socket_dir, std::ostream& out);

// The `list` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeListCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_LIST_COMMAND_H_
