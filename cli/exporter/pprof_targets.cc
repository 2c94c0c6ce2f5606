#include "cli/exporter/pprof_targets.h"

#include <unistd.h>

#include "cli/client/profiling_format.h"
#include "cli/io/logging.h"
#include "cli/io/parallel_for.h"
#include "cli/targets/stale_socket.h"

namespace memprof::cli {
namespace {

std::string Joined(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    line += word;
  }
  return line;
}

PprofTarget Describe(const SocketEntry& entry, ProfileClient& client) {
  PprofTarget row;
  row.pid = entry.target.pid;
  row.command = entry.target.command;
  row.command_line = Joined(entry.cmdline);
  if (!entry.untrusted.empty()) {
    row.profiling = "untrusted socket";
    return row;
  }
  auto status = client.Status(entry.target);
  if (!status) {
    Log().debug("pid {}: not answering: {}", row.pid, status.error().message);
    row.profiling = "not answering";
    return row;
  }
  row.profiling = ProfilingState(*status);
  row.profilable = !ProfilingHint(*status).has_value();
  row.allocations = row.profilable && status->allocator() == memprof::v1::ALLOCATOR_KIND_JEMALLOC;
  return row;
}

}  // namespace

Result<std::vector<PprofTarget>> CollectPprofTargets(const TargetDiscovery& discovery,
                                                     const ClientFactory& make_client,
                                                     size_t max_parallel) {
  auto entries = discovery.Scan();
  if (!entries) return Fail(entries.error());
  *entries = PruneStaleSockets(std::move(*entries), discovery, ::geteuid());
  std::erase_if(*entries, [](const SocketEntry& e) { return !e.process_exists; });
  std::vector<PprofTarget> rows(entries->size());
  ForEachInParallel(entries->size(), max_parallel, [&](size_t i) {
    const std::unique_ptr<ProfileClient> client = make_client();  // one per worker
    rows[i] = Describe((*entries)[i], *client);
  });
  return rows;
}

}  // namespace memprof::cli
