#include "cli/collect/heap_capture.h"

#include <sstream>

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

Result<void> ProfileThenDump(const HeapCaptureRequest& request, const TargetDiscovery& discovery,
                             ProfileClient& client, ProfileClient& restore_client,
                             const Console& console, const std::stop_token& stop) {
  ProfileWindowRequest window;
  window.target.resolved = request.target;
  window.duration = *request.window;
  window.out = kStdoutPath;
  window.format = request.format;
  ProfileRuntime runtime;
  runtime.end_early = stop;
  runtime.abort = stop;
  runtime.restore_client = &restore_client;
  auto outcome = RunProfileWindow(window, discovery, client, console, runtime);
  if (!outcome) return Fail(outcome.error());
  if (!outcome->restore_error.empty()) {
    Log().warn("pid {}: could not put the profiling state back: {}", request.target.pid,
               outcome->restore_error);
  }
  return {};
}

}  // namespace

Result<std::string> CaptureHeapReport(const HeapCaptureRequest& request,
                                      const TargetDiscovery& discovery, ProfileClient& client,
                                      ProfileClient& restore_client, const std::stop_token& stop) {
  std::ostringstream out;
  std::ostringstream err;
  const Console console{out, err};
  auto done = request.window
                  ? ProfileThenDump(request, discovery, client, restore_client, console, stop)
                  : DumpNow(request, discovery, client, console, stop);
  LogNotes(request.target, err);
  if (!done) return Fail(done.error());
  return std::move(out).str();
}

}  // namespace memprof::cli
