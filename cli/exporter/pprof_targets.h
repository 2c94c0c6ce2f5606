#ifndef MEMPROF_CLI_EXPORTER_PPROF_TARGETS_H_
#define MEMPROF_CLI_EXPORTER_PPROF_TARGETS_H_

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "cli/exporter/target_metrics.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// One row of the /debug/pprof/ index. Plain data; the page is html_pages.h's.
struct PprofTarget {
  pid_t pid = 0;
  std::string command;       // comm
  std::string command_line;  // /proc/<pid>/cmdline, arguments joined by spaces
  // As `list` says it (ProfilingState: "active", "inactive", "off",
  // "unsupported", "n/a"), or "not answering" / "untrusted socket".
  std::string profiling;
  bool profilable = false;   // jemalloc with opt.prof: a heap profile can be asked for
  bool allocations = false;  // and an allocation profile: jemalloc (not tcmalloc)
};

// Every live local target (TargetDiscovery::Scan, as `list` finds them),
// each asked Status, at most `max_parallel` at once; sorted by pid. Fails
// only when the socket directory cannot be read.
[[nodiscard]] Result<std::vector<PprofTarget>> CollectPprofTargets(const TargetDiscovery& discovery,
                                                                   const ClientFactory& make_client,
                                                                   size_t max_parallel);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_PPROF_TARGETS_H_
