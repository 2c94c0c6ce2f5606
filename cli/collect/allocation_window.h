#ifndef MEMPROF_CLI_COLLECT_ALLOCATION_WINDOW_H_
#define MEMPROF_CLI_COLLECT_ALLOCATION_WINDOW_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/profile_window.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// One allocation window of one target: `memprofctl profile --allocations`,
// and the exporter's /debug/pprof/allocs?seconds=S.
struct AllocationWindowRequest {
  TargetSelector target;
  std::chrono::milliseconds duration{0};
  uint64_t record_bound = 0;  // 0: the agent's default
  std::string out;            // FILE, or "-" for console.out
  std::string out_dir;        // or DIR: {host}-{pid}-{UTC time}.allocs in it
  std::string format = kRawDumpFormat;  // the raw allocation profile, or a report format
  ExistingFile existing = ExistingFile::kRefuse;
};

// What the window and its profile came to.
struct AllocationOutcome {
  pid_t pid = 0;
  std::string path;
  std::chrono::milliseconds requested{0};
  std::chrono::milliseconds waited{0};
  bool interrupted = false;  // the first signal ended it early
  uint64_t window = 0;       // the agent's number for it
  uint64_t record_bound = 0;
  bool profiling_activated = false;
  // From the profile's header (a file only; empty for stdout).
  std::string ended_by;
  bool records_lost = false;
  DumpSummary dump;
};

// Opens the window (the agent refuses a process that is not jemalloc with
// profiling, or that has one open), waits for it, fetches its profile as
// `dump` delivers one (temp file, size and SHA-256 check, rename; a report
// format is analysed here). The agent ends the window by itself and puts
// jemalloc's state back, so a client that dies changes nothing; a second
// signal (runtime.abort) ends it at once and writes nothing. The target
// exiting during the window is kNotFound and writes nothing.
[[nodiscard]] Result<AllocationOutcome> RunAllocationWindow(const AllocationWindowRequest& request,
                                                            const TargetDiscovery& discovery,
                                                            ProfileClient& client,
                                                            const Console& console,
                                                            const ProfileRuntime& runtime);

// The one-line summary for console.err, and the --json object.
std::string DescribeAllocationOutcome(const AllocationOutcome& outcome);
nlohmann::json AllocationOutcomeToJson(const AllocationOutcome& outcome);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_ALLOCATION_WINDOW_H_
