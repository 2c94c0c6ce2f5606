#ifndef MEMPROF_CLI_EXPORTER_TARGET_METRICS_H_
#define MEMPROF_CLI_EXPORTER_TARGET_METRICS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "cli/client/profile_client.h"
#include "cli/client/target.h"
#include "cli/exporter/prometheus_renderer.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// Asks one agent for its memory figures and whether profiling is active
// (Stats, summary only: no raw report); an agent older than
// StatsResponse.profiling_active is asked Status as well. Fails with the
// first call's error.
[[nodiscard]] Result<TargetMetrics> QueryTargetMetrics(const Target& target,
                                                       ProfileClient& client);

// A fresh client for one worker (each worker of a scrape has its own).
using ClientFactory = std::function<std::unique_ptr<ProfileClient>()>;

// One scrape of every local target: TargetDiscovery::Scan() as `list` does,
// then QueryTargetMetrics for each live process, at most `max_parallel` at
// once. A process that has exited (a stale socket) is left out, so its
// series end, and its socket removed if ours (PruneStaleSockets); an agent that does not answer, or whose socket is not trusted,
// is reported with up=false. Sorted by pid. Fails only when the socket
// directory cannot be read.
[[nodiscard]] Result<std::vector<TargetMetrics>> CollectTargetMetrics(
    const TargetDiscovery& discovery, const ClientFactory& make_client, size_t max_parallel);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_TARGET_METRICS_H_
