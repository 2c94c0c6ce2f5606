#include "cli/exporter/heap_profile_endpoint.h"

#include <utility>

#include "cli/client/profiling_format.h"
#include "cli/exporter/heap_query.h"
#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

HttpResponse TextResponse(unsigned status, std::string message) {
  return HttpResponse{status, kPlainText, std::move(message) + "\n", {}};
}

HttpResponse ErrorResponse(const Error& error, bool target_exited) {
  HttpResponse r = TextResponse(HeapErrorStatus(error, target_exited), error.message);
  if (r.status == 429) r.headers.emplace_back("Retry-After", "1");
  return r;
}

std::string NotActive(pid_t pid) {
  const std::string n = std::to_string(pid);
  return "profiling is not active in pid " + n +
         ", so nothing has been sampled to show: ask /debug/pprof/heap?pid=" + n +
         "&seconds=S to profile for S seconds (" + std::to_string(kMinHeapSeconds.count()) +
         " to " + std::to_string(kMaxHeapSeconds.count()) +
         ") first, or activate profiling (memprofctl activate --pid " + n + ")";
}

}  // namespace

unsigned HeapErrorStatus(const Error& error, bool target_exited) {
  if (target_exited) return 502;
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kFailedPrecondition:
      return 412;
    case ErrorCode::kResourceExhausted:
      return 429;
    case ErrorCode::kUnavailable:
    case ErrorCode::kCancelled:
      return 503;
    default:
      return 500;
  }
}

HeapProfileEndpoint::HeapProfileEndpoint(const TargetDiscovery& discovery,
                                         ClientFactory status_client, HeapCapture capture,
                                         size_t max_in_flight)
    : discovery_(discovery),
      status_client_(std::move(status_client)),
      capture_(std::move(capture)),
      gate_(max_in_flight) {}

HttpResponse HeapProfileEndpoint::Handle(const HttpRequest& request) {
  auto query = ParseHeapQuery(request);
  if (!query) return ErrorResponse(query.error(), false);
  auto target = discovery_.Resolve(query->pid);
  if (!target) return ErrorResponse(target.error(), false);
  auto ticket = gate_.TryEnter(query->pid, query->seconds.value_or(std::chrono::seconds(0)));
  if (!ticket) {
    HttpResponse busy = TextResponse(429, ticket.error().reason);
    busy.headers.emplace_back("Retry-After", std::to_string(ticket.error().retry_after.count()));
    return busy;
  }
  auto active = ProfilingActive(*target);
  if (!active) return ErrorResponse(active.error(), discovery_.ProcessGone(query->pid));
  if (!*active && !query->seconds) return TextResponse(409, NotActive(query->pid));
  return Capture(*target, query->seconds);
}

// Asks Status first, so that a process that cannot be profiled, or has
// nothing sampled, gets a precise answer instead of an empty profile.
Result<bool> HeapProfileEndpoint::ProfilingActive(const Target& target) const {
  auto status = status_client_()->Status(target);
  if (!status) return Fail(status.error());
  if (auto hint = ProfilingHint(*status)) {
    return Fail(ErrorCode::kFailedPrecondition, DescribeTarget(target) + ": " + *hint);
  }
  return status->profiling_active();
}

HttpResponse HeapProfileEndpoint::Capture(const Target& target,
                                          std::optional<std::chrono::seconds> seconds) const {
  std::optional<std::chrono::milliseconds> window;
  if (seconds) window = *seconds;
  auto profile = capture_(target, window);
  if (!profile) {
    const bool exited = discovery_.ProcessGone(target.pid);
    Error error = profile.error();
    if (exited) {
      error.message = DescribeTarget(target) + " exited while its heap profile was being taken (" +
                      error.message + ")";
    }
    Log().info("http: heap profile of pid {} failed: {}", target.pid, error.message);
    return ErrorResponse(error, exited);
  }
  return HttpResponse{200,
                      "application/octet-stream",
                      std::move(*profile),
                      {{"Content-Disposition", "attachment; filename=\"heap.pb.gz\""},
                       {"X-Content-Type-Options", "nosniff"}}};
}

}  // namespace memprof::cli
