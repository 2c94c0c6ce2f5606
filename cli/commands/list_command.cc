#include "cli/commands/list_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/commands/profiling_format.h"
#include "cli/text_table.h"
#include "cli/user_name.h"
#include "common/unix_socket.h"

namespace memprof::cli {
namespace {

constexpr size_t kMaxCommandWidth = 60;

std::string JoinCommand(const SocketEntry& entry) {
  std::string joined;
  for (const std::string& arg : entry.cmdline) joined += (joined.empty() ? "" : " ") + arg;
  return joined.empty() ? entry.target.command : joined;
}

std::string Shorten(const std::string& text) {
  if (text.size() <= kMaxCommandWidth) return text;
  return text.substr(0, kMaxCommandWidth - 3) + "...";
}

void ApplyStatus(const memprof::v1::StatusResponse& status, ListRow& row) {
  row.allocator = AllocatorName(status.allocator());
  row.profiling = ProfilingState(status);
  row.profiling_enabled = status.profiling_enabled();
  row.profiling_active = status.profiling_active();
  row.agent_version = status.agent_version();
}

}  // namespace

CLI::App* RegisterListCommand(CLI::App& app, ListOptions& options) {
  CLI::App* cmd = app.add_subcommand("list", "List the processes that have a memprof agent");
  cmd->add_flag("--json", options.json, "Machine-readable output (snake_case keys, fixed types)");
  cmd->add_flag("--prune", options.prune,
                "Remove stale sockets: those of exited processes and those nobody listens on");
  cmd->footer(
      "Targets in containers (other mount or pid namespaces) are found through\n"
      "/proc/<pid>/root and listed by their pid on this host.\n\n"
      "Examples:\n"
      "  memprofctl list\n"
      "  memprofctl list --prune          # clean up after processes killed with SIGKILL\n"
      "  MEMPROF_SOCKET_DIR=/run/memprof memprofctl list --json\n");
  return cmd;
}

ListRow BuildListRow(const SocketEntry& entry, ProfileClient& client) {
  ListRow row;
  row.pid = entry.target.pid;
  row.uid = entry.uid;
  row.user = UserName(entry.uid);
  row.command = JoinCommand(entry);
  row.socket = entry.target.socket_path;
  row.in_container = entry.in_container;
  if (!entry.process_exists) {
    row.stale = true;
    row.problem = "stale socket: process " + std::to_string(row.pid) +
                  " no longer exists (`memprofctl list --prune` removes it)";
    return row;
  }
  if (!entry.untrusted.empty()) {
    row.problem = entry.untrusted;
    return row;
  }
  auto status = client.Status(entry.target);
  if (status) {
    ApplyStatus(*status, row);
  } else {
    row.problem = status.error().message;
    row.stale = NobodyListens(entry.target.socket_path);
  }
  return row;
}

void PruneRow(ListRow& row) {
  if (!row.stale) return;
  if (::unlink(row.socket.c_str()) == 0 || errno == ENOENT) {
    row.removed = true;
    row.problem = "stale socket removed";
    return;
  }
  row.problem += std::string("; could not remove it: ") + std::strerror(errno);
}

Result<void> RunList(const ListOptions& options, TargetDiscovery& discovery, ProfileClient& client,
                     std::ostream& out) {
  auto entries = discovery.Scan();
  if (!entries) return Fail(entries.error());
  std::vector<ListRow> rows;
  rows.reserve(entries->size());
  for (const SocketEntry& entry : *entries) {
    rows.push_back(BuildListRow(entry, client));
    if (options.prune) PruneRow(rows.back());
  }
  if (options.json) {
    out << ListToJson(rows, discovery.socket_dir()).dump(2) << '\n';
  } else {
    PrintList(rows, discovery.socket_dir(), out);
  }
  return {};
}

nlohmann::json ListToJson(const std::vector<ListRow>& rows, const std::string& socket_dir) {
  nlohmann::json targets = nlohmann::json::array();
  for (const ListRow& row : rows) {
    targets.push_back({{"pid", row.pid},
                       {"uid", row.uid},
                       {"user", row.user},
                       {"command", row.command},
                       {"allocator", row.allocator},
                       {"profiling_enabled", row.profiling_enabled},
                       {"profiling_active", row.profiling_active},
                       {"agent_version", row.agent_version},
                       {"socket", row.socket},
                       {"in_container", row.in_container},
                       {"stale", row.stale},
                       {"removed", row.removed},
                       {"problem", row.problem}});
  }
  return {{"socket_dir", socket_dir}, {"targets", std::move(targets)}};
}

void PrintList(const std::vector<ListRow>& rows, const std::string& socket_dir, std::ostream& out) {
  if (rows.empty()) {
    out << "no memprof agents found in " << socket_dir << '\n';
    return;
  }
  TextTable table({"PID", "USER", "ALLOCATOR", "PROFILING", "AGENT", "COMMAND"});
  table.SetAlign(0, TextTable::Align::kRight);
  for (const ListRow& row : rows) {
    const bool ok = row.problem.empty();
    table.AddRow({std::to_string(row.pid), row.user, ok ? row.allocator : "-", row.profiling,
                  ok ? row.agent_version : "-", row.command.empty() ? "-" : Shorten(row.command)});
  }
  table.Print(out);
  for (const ListRow& row : rows) {
    if (!row.problem.empty()) out << "problem: pid " << row.pid << ": " << row.problem << '\n';
  }
}

}  // namespace memprof::cli
