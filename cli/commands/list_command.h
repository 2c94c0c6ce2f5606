#ifndef MEMPROF_CLI_COMMANDS_LIST_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_LIST_COMMAND_H_

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/profile_client.h"
#include "cli/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl list [--json] [--prune]`: every process with an agent socket,
// and its state. --prune removes the stale sockets it finds.
struct ListOptions {
  bool json = false;
  bool prune = false;
};

// One line of `list`; the fields of an unreachable agent keep their zero
// values ("unknown" allocator) and `problem` says why.
struct ListRow {
  pid_t pid = 0;
  pid_t ppid = 0;  // 0 when the process is gone or its parent is unknown
  uid_t uid = 0;
  std::string user;
  std::string command;
  std::string allocator = "unknown";
  std::string profiling = "-";  // see ProfilingState()
  bool profiling_enabled = false;
  bool profiling_active = false;
  std::string agent_version;
  std::string socket;
  bool in_container = false;  // found under /proc/<pid>/root
  bool stale = false;         // process gone, or nobody listening: safe to remove
  bool removed = false;       // --prune removed the socket
  std::string problem;        // "" when the agent answered
};

CLI::App* RegisterListCommand(CLI::App& app, ListOptions& options);

// Asks each live agent for its Status; stale sockets and unreachable agents
// become rows with a problem, not errors.
[[nodiscard]] Result<void> RunList(const ListOptions& options, TargetDiscovery& discovery,
                                   ProfileClient& client, std::ostream& out);

ListRow BuildListRow(const SocketEntry& entry, ProfileClient& client);

// Removes the socket of a stale row (--prune); a failure becomes its problem.
void PruneRow(ListRow& row);

// The rows in family order, each with its depth: a row whose parent is also
// listed comes right after that parent (depth + 1), in pid order among
// siblings; the others are roots (depth 0), in pid order.
std::vector<std::pair<const ListRow*, int>> FamilyOrder(const std::vector<ListRow>& rows);

nlohmann::json ListToJson(const std::vector<ListRow>& rows, const std::string& socket_dir);

void PrintList(const std::vector<ListRow>& rows, const std::string& socket_dir, std::ostream& out);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_LIST_COMMAND_H_
