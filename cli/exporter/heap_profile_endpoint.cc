#include "cli/exporter/heap_profile_endpoint.h"

#include <utility>

#include "cli/client/profiling_format.h"
#include "cli/exporter/heap_query.h"
#include "cli/exporter/pprof_response.h"
#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

std::string NotActive(pid_t pid) {
  const std::string n = std::to_string(pid);
  return "profiling is not active in pid " + n +
         ", so nothing has been sampled to show: ask /debug/pprof/pid/" + n +
         "/heap?seconds=S to profile for S seconds (" + std::to_string(kMinHeapSeconds.count()) +
         " to " + std::to_string(kMaxHeapSeconds.count()) +
         ") first, or activate profiling (memprofctl activate --pid " + n + ")";
}

std::string ProfileName(PprofProfile profile) {
  return profile == PprofProfile::kHeap ? "heap profile" : "allocation profile";
}

// The agent opens one allocation window at a time, and says so
// ("allocation window #N is already open ..."): a window of another client
// (`memprofctl profile --allocations`) makes the process busy, as a request
// of ours would (429), not unprofilable (412).
Error BusyWindowIsExhaustion(Error error) {
  if (error.code == ErrorCode::kFailedPrecondition &&
      error.message.find(" is already open") != std::string::npos) {
    error.code = ErrorCode::kResourceExhausted;
  }
  return error;
}

}  // namespace

HeapProfileEndpoint::HeapProfileEndpoint(const TargetDiscovery& discovery,
                                         ClientFactory status_client, HeapCapture capture,
                                         PprofProfile profile, size_t max_in_flight)
    : discovery_(discovery),
      status_client_(std::move(status_client)),
      capture_(std::move(capture)),
      profile_(profile),
      gate_(max_in_flight, ProfileName(profile)) {}

HttpResponse HeapProfileEndpoint::Handle(const HttpRequest& request) {
  auto query =
      profile_ == PprofProfile::kHeap ? ParseHeapQuery(request) : ParseAllocsQuery(request);
  if (!query) return PprofError(query.error(), false);
  auto target = discovery_.Resolve(query->pid);
  if (!target) return PprofError(target.error(), false);
  auto ticket = gate_.TryEnter(query->pid, query->seconds.value_or(std::chrono::seconds(0)));
  if (!ticket) {
    HttpResponse busy = PprofText(429, ticket.error().reason);
    busy.headers.emplace_back("Retry-After", std::to_string(ticket.error().retry_after.count()));
    return busy;
  }
  auto status = ProfilableStatus(*target);
  if (!status) return PprofError(status.error(), discovery_.ProcessGone(query->pid));
  std::optional<std::chrono::seconds> window = query->seconds;
  if (!status->profiling_active() && !window) {
    if (status->allocator() != memprof::v1::ALLOCATOR_KIND_TCMALLOC) {
      return PprofText(409, NotActive(query->pid));
    }
    // tcmalloc has sampled since start-up, and its sample is of the live
    // heap, which the agent serves only while activated: the shortest
    // window shows it all (and puts the state back).
    window = kMinHeapSeconds;
  }
  return Capture(*target, window);
}

// Asks Status first, so that a process that cannot be profiled, or has
// nothing sampled, gets a precise answer instead of an empty profile.
Result<memprof::v1::StatusResponse> HeapProfileEndpoint::ProfilableStatus(
    const Target& target) const {
  auto status = status_client_()->Status(target);
  if (!status) return Fail(status.error());
  if (auto hint = ProfilingHint(*status)) {
    return Fail(ErrorCode::kFailedPrecondition, DescribeTarget(target) + ": " + *hint);
  }
  return status;
}

HttpResponse HeapProfileEndpoint::Capture(const Target& target,
                                          std::optional<std::chrono::seconds> seconds) const {
  std::optional<std::chrono::milliseconds> window;
  if (seconds) window = *seconds;
  auto profile = capture_(target, window);
  const std::string name = ProfileName(profile_);
  if (!profile) {
    const bool exited = discovery_.ProcessGone(target.pid);
    Error error = BusyWindowIsExhaustion(profile.error());
    if (exited) {
      error.message = DescribeTarget(target) + " exited while its " + name + " was being taken (" +
                      error.message + ")";
    }
    Log().info("http: {} of pid {} failed: {}", name, target.pid, error.message);
    return PprofError(error, exited);
  }
  const char* file = profile_ == PprofProfile::kHeap ? "heap.pb.gz" : "allocs.pb.gz";
  return HttpResponse{
      200,
      "application/octet-stream",
      std::move(*profile),
      {{"Content-Disposition", std::string("attachment; filename=\"") + file + "\""},
       {"X-Content-Type-Options", "nosniff"}}};
}

}  // namespace memprof::cli
