#include "cli/exporter/target_metrics.h"

#include <unistd.h>

#include "cli/client/profiling_format.h"
#include "cli/io/logging.h"
#include "cli/io/parallel_for.h"
#include "cli/targets/stale_socket.h"

namespace memprof::cli {
namespace {

TargetMetrics Unreachable(const SocketEntry& entry, const std::string& why) {
  Log().debug("pid {}: reported down: {}", entry.target.pid, why);
  TargetMetrics metrics;
  metrics.pid = entry.target.pid;
  metrics.command = entry.target.command;
  return metrics;
}

TargetMetrics Sample(const SocketEntry& entry, ProfileClient& client) {
  if (!entry.untrusted.empty()) return Unreachable(entry, entry.untrusted);
  auto metrics = QueryTargetMetrics(entry.target, client);
  if (!metrics) return Unreachable(entry, metrics.error().message);
  return *metrics;
}

// From the Stats answer itself, or (an agent older than that field) Status.
Result<bool> ProfilingActive(const memprof::v1::StatsResponse& stats, const Target& target,
                             ProfileClient& client) {
  if (stats.has_profiling_active()) return stats.profiling_active();
  auto status = client.Status(target);
  if (!status) return Fail(status.error());
  return status->profiling_active();
}

}  // namespace

Result<TargetMetrics> QueryTargetMetrics(const Target& target, ProfileClient& client) {
  auto stats = client.Stats(target, memprof::v1::StatsRequest());
  if (!stats) return Fail(stats.error());
  auto active = ProfilingActive(*stats, target, client);
  if (!active) return Fail(active.error());
  TargetMetrics metrics;
  metrics.pid = target.pid;
  metrics.command = target.command;
  metrics.up = true;
  metrics.allocator = AllocatorName(stats->allocator());
  metrics.profiling_active = *active;
  metrics.figures = FiguresOf(*stats);
  if (stats->has_captures_held()) metrics.captures_held = stats->captures_held();
  if (stats->has_captures_taken_total()) {
    metrics.captures_taken_total = stats->captures_taken_total();
  }
  return metrics;
}

Result<std::vector<TargetMetrics>> CollectTargetMetrics(const TargetDiscovery& discovery,
                                                        const ClientFactory& make_client,
                                                        size_t max_parallel) {
  auto entries = discovery.Scan();
  if (!entries) return Fail(entries.error());
  *entries = PruneStaleSockets(std::move(*entries), discovery, ::geteuid());
  std::erase_if(*entries, [](const SocketEntry& e) { return !e.process_exists; });
  std::vector<TargetMetrics> results(entries->size());
  ForEachInParallel(entries->size(), max_parallel, [&](size_t i) {
    // A client per call: GrpcProfileClient holds no connection, so this is
    // cheap, and no client is shared between threads.
    const std::unique_ptr<ProfileClient> client = make_client();
    results[i] = Sample((*entries)[i], *client);
  });
  return results;
}

}  // namespace memprof::cli
