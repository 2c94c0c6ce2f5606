#ifndef MEMPROF_CLI_EXPORTER_HEAP_PROFILE_ENDPOINT_H_
#define MEMPROF_CLI_EXPORTER_HEAP_PROFILE_ENDPOINT_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "cli/client/target.h"
#include "cli/exporter/heap_request_gate.h"
#include "cli/exporter/http_server.h"
#include "cli/exporter/target_metrics.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// Takes the gzipped pprof profile of a target's heap: now, or after
// profiling for `window`. The exporter command wires in
// collect/heap_capture.h (the exporter folder does not include collect/).
using HeapCapture = std::function<Result<std::string>(
    const Target& target, std::optional<std::chrono::milliseconds> window)>;

// How many heap profiles the exporter takes at once (each symbolizes here);
// as many allocation profiles again.
inline constexpr size_t kMaxHeapRequests = 2;

// Which of Go's memory profiles an endpoint serves.
enum class PprofProfile {
  kHeap,    // /debug/pprof/heap: what has been sampled (over `seconds`)
  kAllocs,  // /debug/pprof/allocs: an allocation window of `seconds`
};

// GET /debug/pprof/heap?pid=N[&seconds=S], in the layout of Go's
// net/http/pprof: 200 with the profile as application/octet-stream and
// Content-Disposition: attachment; filename="heap.pb.gz". Without seconds,
// profiling must be active (409 otherwise, saying to activate it or to pass
// seconds), except in a tcmalloc process, whose sampler runs from start-up:
// there the shortest window (kMinHeapSeconds) serves its live heap.
// Admission by HeapRequestGate (429 with Retry-After). Failures are plain
// text saying what is wrong and what to do, with the codes of
// PprofErrorStatus (pprof_response.h). Thread-safe.
//
// With PprofProfile::kAllocs, GET /debug/pprof/allocs?pid=N[&seconds=S]:
// the same, for an allocation window of S seconds (kDefaultAllocsSeconds
// without it; `capture` records one), served as "allocs.pb.gz". Its own
// gate: an allocation window and a heap profile of one process may run at
// once. The agent refusing a window because one is already open (another
// client's) is 429 too.
class HeapProfileEndpoint {
 public:
  HeapProfileEndpoint(const TargetDiscovery& discovery, ClientFactory status_client,
                      HeapCapture capture, PprofProfile profile = PprofProfile::kHeap,
                      size_t max_in_flight = kMaxHeapRequests);

  HttpResponse Handle(const HttpRequest& request);

 private:
  Result<memprof::v1::StatusResponse> ProfilableStatus(const Target& target) const;
  HttpResponse Capture(const Target& target, std::optional<std::chrono::seconds> seconds) const;

  const TargetDiscovery& discovery_;
  ClientFactory status_client_;
  HeapCapture capture_;
  PprofProfile profile_;
  HeapRequestGate gate_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_HEAP_PROFILE_ENDPOINT_H_
