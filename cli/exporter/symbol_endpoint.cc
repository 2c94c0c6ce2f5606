#include "cli/exporter/symbol_endpoint.h"

#include <utility>

#include "cli/exporter/heap_query.h"
#include "cli/exporter/pprof_response.h"
#include "cli/exporter/symbol_query.h"
#include "cli/io/logging.h"

namespace memprof::cli {
namespace {

constexpr char kSymbolPathUsage[] =
    "pprof asks /debug/pprof/pid/N/symbol for a profile fetched from /debug/pprof/pid/N/heap";

HttpResponse SymbolAnswer(std::string text) {
  return HttpResponse{200, kPlainText, std::move(text), {}};
}

// Holds one of the semaphore's turns until it goes out of scope.
class SymbolTurn {
 public:
  explicit SymbolTurn(std::counting_semaphore<>& turns) : turns_(turns) {}
  ~SymbolTurn() { turns_.release(); }
  SymbolTurn(const SymbolTurn&) = delete;
  SymbolTurn& operator=(const SymbolTurn&) = delete;

 private:
  std::counting_semaphore<>& turns_;
};

}  // namespace

SymbolEndpoint::SymbolEndpoint(const TargetDiscovery& discovery, SymbolLookup lookup,
                               size_t max_in_flight, std::chrono::milliseconds turn_wait)
    : discovery_(discovery),
      lookup_(std::move(lookup)),
      turns_(static_cast<std::ptrdiff_t>(max_in_flight)),
      max_in_flight_(max_in_flight),
      turn_wait_(turn_wait) {}

HttpResponse SymbolEndpoint::Handle(const HttpRequest& request) {
  auto pid = ParsePidArgument(request, kSymbolPathUsage);
  if (!pid) return PprofError(pid.error());
  std::optional<Target> target;
  if (*pid) {
    auto resolved = discovery_.Resolve(**pid);
    if (!resolved) return PprofError(resolved.error());
    target = std::move(*resolved);
  }
  if (request.method != "POST") {
    return SymbolAnswer(target ? "num_symbols: 1\n" : "num_symbols: 0\n");
  }
  auto addresses = ParseSymbolRequest(request.body);
  if (!addresses) return PprofError(addresses.error());
  if (!target) return SymbolAnswer("");
  return Symbolize(*target, *addresses);
}

HttpResponse SymbolEndpoint::Symbolize(const Target& target, std::span<const uint64_t> addresses) {
  if (!turns_.try_acquire_for(turn_wait_)) {
    HttpResponse busy = PprofText(429, "the exporter is already naming addresses for " +
                                           std::to_string(max_in_flight_) +
                                           " symbol requests (its limit); try again shortly");
    busy.headers.emplace_back("Retry-After", "1");
    return busy;
  }
  const SymbolTurn turn(turns_);
  auto names = lookup_(target, addresses);
  if (!names) {
    Log().info("http: symbols of pid {} failed: {}", target.pid, names.error().message);
    return PprofError(names.error(), discovery_.ProcessGone(target.pid));
  }
  return SymbolAnswer(FormatSymbolAnswer(addresses, *names));
}

}  // namespace memprof::cli
