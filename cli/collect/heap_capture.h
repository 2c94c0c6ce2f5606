#ifndef MEMPROF_CLI_COLLECT_HEAP_CAPTURE_H_
#define MEMPROF_CLI_COLLECT_HEAP_CAPTURE_H_

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/client/target.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// One heap profile of one target, analysed here and returned in memory:
// the exporter's /debug/pprof/heap.
struct HeapCaptureRequest {
  Target target;
  std::string format = "pprof";  // a report format (report::ParseFormat)
  // Profile for this long first, as `memprofctl profile --duration` does
  // (activate, wait, dump, put the state back); nullopt: dump what has been
  // sampled so far, as `memprofctl dump` does.
  std::optional<std::chrono::milliseconds> window;
  // Instead, an allocation window of `window` (required then), as
  // `memprofctl profile --allocations` records one: the exporter's
  // /debug/pprof/allocs.
  bool allocations = false;
};

// The report of a dump taken now, after a profiling window, or of an
// allocation window: exactly what `memprofctl dump --format F --out -`,
// `memprofctl profile --format F --out -` or `memprofctl profile
// --allocations --format F --out -` would print (DeliverDump / RunProfileWindow with stdout
// redirected into a string, symbolized through /proc/<pid>). `restore_client` puts the profiling
// state back after a window and should not be cancelled by `stop`; `stop` ends a window early and
// cancels the dump. Notes and the symbolization summary go to the debug log; a failure to put the
// state back is logged as a warning. Errors: those of the dump and of the window.
[[nodiscard]] Result<std::string> CaptureHeapReport(const HeapCaptureRequest& request,
                                                    const TargetDiscovery& discovery,
                                                    ProfileClient& client,
                                                    ProfileClient& restore_client,
                                                    const std::stop_token& stop);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_HEAP_CAPTURE_H_
