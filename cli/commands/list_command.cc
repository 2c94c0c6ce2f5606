#include "cli/commands/list_command.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "cli/client/profiling_format.h"
#include "cli/io/text_table.h"
#include "cli/io/user_name.h"
#include "common/json_schema_versions.h"
#include "common/unix_socket.h"

namespace memprof::cli {
namespace {

constexpr size_t kMaxCommandWidth = 60;

std::string JoinCommand(const SocketEntry& entry) {
  const std::string title = ProcessTitle(entry.cmdline);
  return title.empty() ? entry.target.command : title;
}

// The effective user, as `status` shows it; the real one too when they
// differ (a service that switched with seteuid/setresuid).
std::string UserText(const ListRow& row) {
  if (row.real_uid == row.uid) return row.user;
  return row.user + " (real " + UserName(row.real_uid) + ")";
}

std::string Shorten(const std::string& text) {
  if (text.size() <= kMaxCommandWidth) return text;
  return text.substr(0, kMaxCommandWidth - 3) + "...";
}

ListRow BaseRow(const SocketEntry& entry) {
  ListRow row;
  row.pid = entry.target.pid;
  row.ppid = entry.ppid;
  row.uid = entry.uid;
  row.real_uid = entry.real_uid;
  row.user = UserName(entry.uid);
  row.command = JoinCommand(entry);
  row.socket = entry.target.socket_path;
  row.in_container = entry.in_container;
  return row;
}

using Children = std::map<pid_t, std::vector<const ListRow*>>;

// Appends `self` (unless null or placed already) at `depth`, then the
// children of `pid` below it, depth first.
void AppendFamily(pid_t pid, int depth, const Children& children, std::set<pid_t>& placed,
                  std::vector<std::pair<const ListRow*, int>>& order,
                  const ListRow* self = nullptr) {
  if (self != nullptr) {
    if (!placed.insert(self->pid).second) return;
    order.emplace_back(self, depth);
  }
  const auto kids = children.find(pid);
  if (kids == children.end()) return;
  for (const ListRow* kid : kids->second) {
    AppendFamily(kid->pid, depth + 1, children, placed, order, kid);
  }
}

// "\\_ " under its parent, two more spaces per generation, as `ps --forest`.
std::string FamilyPrefix(int depth) {
  return depth == 0 ? "" : std::string(2 * static_cast<size_t>(depth - 1), ' ') + "\\_ ";
}

void ApplyStatus(const memprof::v1::StatusResponse& status, ListRow& row) {
  row.allocator = AllocatorName(status.allocator());
  row.profiling = ProfilingState(status);
  row.profiling_enabled = status.profiling_enabled();
  row.profiling_active = status.profiling_active();
  row.sampler = status.sampler();
  row.agent_version = status.agent_version();
}

}  // namespace

CLI::App* RegisterListCommand(CLI::App& app, ListOptions& options) {
  CLI::App* cmd = app.add_subcommand("list", "List the processes that have a memprof agent");
  cmd->add_flag("--json", options.json, "Machine-readable output (snake_case keys, fixed types)");
  cmd->add_flag("--prune,!--no-prune", options.prune,
                "Remove provably stale sockets instead of listing them (the default); "
                "--no-prune lists them and removes nothing");
  cmd->footer(
      "A worker is shown under the process that forked it (PPID), when both have\n"
      "an agent. Stale sockets -- of a process that is gone, of a pid that now\n"
      "belongs to a newer process, or that nobody listens on (after SIGKILL,\n"
      "_exit or exec) -- are removed from the socket directory if they are yours\n"
      "(any, as root); -v says which. Targets in containers (other mount or pid\n"
      "namespaces) are found through /proc/<pid>/root and listed by their pid on\n"
      "this host; their sockets are never removed.\n\n"
      "Examples:\n"
      "  memprofctl list\n"
      "  memprofctl -v list               # also say which stale sockets were removed\n"
      "  memprofctl list --no-prune       # show stale sockets, remove nothing\n"
      "  MEMPROF_SOCKET_DIR=/run/memprof memprofctl list --json\n");
  return cmd;
}

ListRow BuildListRow(const SocketEntry& entry, ProfileClient& client,
                     const TargetDiscovery& discovery) {
  ListRow row = BaseRow(entry);
  SocketEvidence evidence{.process_started = entry.process_started,
                          .socket_changed = entry.socket_file.changed};
  if (!entry.process_exists) {
    // Its status could not be read; only a missing /proc/<pid> proves it gone.
    evidence.process_gone = discovery.ProcessGone(row.pid);
    if (!evidence.process_gone) row.problem = "cannot read /proc/" + std::to_string(row.pid);
  } else if (!entry.untrusted.empty()) {
    row.problem = entry.untrusted;
    return row;
  } else if (auto status = client.Status(entry.target)) {
    ApplyStatus(*status, row);
    evidence.agent_answered = true;
  } else {
    row.problem = status.error().message;
    evidence.connection_refused = NobodyListens(entry.target.socket_path);
  }
  row.stale_reason = ClassifySocket(evidence);
  row.stale = row.stale_reason != StaleReason::kNone;
  if (row.stale) row.problem = "stale socket: " + DescribeStaleReason(row.stale_reason, row.pid);
  return row;
}

bool PruneRow(ListRow& row, const SocketEntry& entry, uid_t caller) {
  if (!row.stale) return false;
  const std::string stays = RemoveStaleSocket(entry, row.stale_reason, caller);
  if (stays.empty()) return true;
  row.problem += "; " + stays;
  return false;
}

Result<void> RunList(const ListOptions& options, TargetDiscovery& discovery, ProfileClient& client,
                     std::ostream& out, uid_t caller) {
  auto entries = discovery.Scan();
  if (!entries) return Fail(entries.error());
  std::vector<ListRow> rows;
  rows.reserve(entries->size());
  for (const SocketEntry& entry : *entries) {
    ListRow row = BuildListRow(entry, client, discovery);
    if (options.prune && PruneRow(row, entry, caller)) continue;
    if (!options.prune && row.stale) {
      row.problem += " (`memprofctl list` without --no-prune removes it)";
    }
    rows.push_back(std::move(row));
  }
  if (options.json) {
    out << ListToJson(rows, discovery.socket_dir()).dump(2) << '\n';
  } else {
    PrintList(rows, discovery.socket_dir(), out);
  }
  return {};
}

std::vector<std::pair<const ListRow*, int>> FamilyOrder(const std::vector<ListRow>& rows) {
  Children children;
  std::set<pid_t> listed;
  for (const ListRow& row : rows) listed.insert(row.pid);
  for (const ListRow& row : rows) {
    const bool has_listed_parent = row.ppid != row.pid && listed.contains(row.ppid);
    children[has_listed_parent ? row.ppid : 0].push_back(&row);
  }
  for (auto& [parent, kids] : children) {
    std::sort(kids.begin(), kids.end(),
              [](const ListRow* a, const ListRow* b) { return a->pid < b->pid; });
  }
  std::vector<std::pair<const ListRow*, int>> order;
  std::set<pid_t> placed;
  AppendFamily(0, -1, children, placed, order);
  // Rows whose parents form a cycle (impossible in /proc, possible in a
  // fixture) are never reached from a root: list them as roots.
  for (const ListRow& row : rows) AppendFamily(row.pid, 0, children, placed, order, &row);
  return order;
}

nlohmann::json ListToJson(const std::vector<ListRow>& rows, const std::string& socket_dir) {
  nlohmann::json targets = nlohmann::json::array();
  for (const ListRow& row : rows) {
    targets.push_back({{"pid", row.pid},
                       {"ppid", row.ppid},
                       {"uid", row.uid},
                       {"real_uid", row.real_uid},
                       {"user", row.user},
                       {"command", row.command},
                       {"allocator", row.allocator},
                       {"profiling_enabled", row.profiling_enabled},
                       {"profiling_active", row.profiling_active},
                       {"sampler", row.sampler},
                       {"agent_version", row.agent_version},
                       {"socket", row.socket},
                       {"in_container", row.in_container},
                       {"stale", row.stale},
                       {"removed", row.removed},
                       {"problem", row.problem}});
  }
  return {{"schema_version", kListJsonVersion},
          {"socket_dir", socket_dir},
          {"targets", std::move(targets)}};
}

void PrintList(const std::vector<ListRow>& rows, const std::string& socket_dir, std::ostream& out) {
  if (rows.empty()) {
    out << "no memprof agents found in " << socket_dir << '\n';
    return;
  }
  TextTable table({"PID", "PPID", "USER", "ALLOCATOR", "PROFILING", "AGENT", "COMMAND"});
  table.SetAlign(0, TextTable::Align::kRight);
  table.SetAlign(1, TextTable::Align::kRight);
  const auto family = FamilyOrder(rows);
  for (const auto& [row, depth] : family) {
    const bool ok = row->problem.empty();
    const std::string command = row->command.empty() ? "-" : Shorten(row->command);
    table.AddRow({std::to_string(row->pid), row->ppid > 0 ? std::to_string(row->ppid) : "-",
                  UserText(*row), ok ? row->allocator : "-", row->profiling,
                  ok ? row->agent_version : "-", FamilyPrefix(depth) + command});
  }
  table.Print(out);
  for (const auto& [row, depth] : family) {
    if (!row->problem.empty()) out << "problem: pid " << row->pid << ": " << row->problem << '\n';
  }
}

namespace {

class ListCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterListCommand(app, options_); }
  Result<void> Run(const CommandContext& context) override {
    return RunList(options_, *context.discovery, *context.client, context.console.out);
  }

 private:
  ListOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeListCommand() { return std::make_unique<ListCommand>(); }

}  // namespace memprof::cli
