#include "cli/collect/heap_capture.h"

#include <sstream>

#include "cli/collect/allocation_window.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/profile_window.h"
#include "cli/io/console.h"
#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

// What the dump or the window had to say (notes, the symbolization summary):
// for whoever runs the exporter with -vv, not for the HTTP client.
void LogNotes(const Target& target, const std::ostringstream& err) {
  std::string text = err.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (!text.empty()) Log().debug("pid {}: {}", target.pid, text);
}

Result<void> DumpNow(const HeapCaptureRequest& request, const TargetDiscovery& discovery,
                     ProfileClient& client, const Console& console, const std::stop_token& stop) {
  DumpDestination destination;
  destination.target.resolved = request.target;
  destination.out = kStdoutPath;
  destination.format = request.format;
  auto dumped = DeliverDump(destination, discovery, client, console, stop);
  if (!dumped) return Fail(dumped.error());
  return {};
}

// A profiling or allocation window (ProfileWindowRequest,
// AllocationWindowRequest) of `request`, its report written to the console.
template <typename WindowRequest>
WindowRequest WindowToStdout(const HeapCaptureRequest& request) {
  WindowRequest window;
  window.target.resolved = request.target;
  window.duration = *request.window;
  window.out = kStdoutPath;
  window.format = request.format;
  return window;
}

// `stop` (the exporter's) ends a window early and cancels its fetch.
ProfileRuntime Runtime(ProfileClient& restore_client, const std::stop_token& stop) {
  ProfileRuntime runtime;
  runtime.end_early = stop;
  runtime.abort = stop;
  runtime.restore_client = &restore_client;
  return runtime;
}

Result<void> ProfileThenDump(const HeapCaptureRequest& request, const TargetDiscovery& discovery,
                             ProfileClient& client, ProfileClient& restore_client,
                             const Console& console, const std::stop_token& stop) {
  auto outcome = RunProfileWindow(WindowToStdout<ProfileWindowRequest>(request), discovery, client,
                                  console, Runtime(restore_client, stop));
  if (!outcome) return Fail(outcome.error());
  if (!outcome->restore_error.empty()) {
    Log().warn("pid {}: could not put the profiling state back: {}", request.target.pid,
               outcome->restore_error);
  }
  return {};
}

// The agent ends the window by itself and puts jemalloc's state back, so
// `restore_client` is only needed to drop the profile of an aborted fetch.
Result<void> RecordAllocations(const HeapCaptureRequest& request, const TargetDiscovery& discovery,
                               ProfileClient& client, ProfileClient& restore_client,
                               const Console& console, const std::stop_token& stop) {
  auto outcome = RunAllocationWindow(WindowToStdout<AllocationWindowRequest>(request), discovery,
                                     client, console, Runtime(restore_client, stop));
  if (!outcome) return Fail(outcome.error());
  return {};
}

Result<void> Capture(const HeapCaptureRequest& request, const TargetDiscovery& discovery,
                     ProfileClient& client, ProfileClient& restore_client, const Console& console,
                     const std::stop_token& stop) {
  if (request.allocations) {
    if (!request.window) {
      return Fail(ErrorCode::kInvalidArgument, "an allocation window needs a duration");
    }
    return RecordAllocations(request, discovery, client, restore_client, console, stop);
  }
  if (request.window) {
    return ProfileThenDump(request, discovery, client, restore_client, console, stop);
  }
  return DumpNow(request, discovery, client, console, stop);
}

}  // namespace

Result<std::string> CaptureHeapReport(const HeapCaptureRequest& request,
                                      const TargetDiscovery& discovery, ProfileClient& client,
                                      ProfileClient& restore_client, const std::stop_token& stop) {
  std::ostringstream out;
  std::ostringstream err;
  const Console console{out, err};
  auto done = Capture(request, discovery, client, restore_client, console, stop);
  LogNotes(request.target, err);
  if (!done) return Fail(done.error());
  return std::move(out).str();
}

}  // namespace memprof::cli
