#ifndef MEMPROF_CLI_EXPORTER_SYMBOL_ENDPOINT_H_
#define MEMPROF_CLI_EXPORTER_SYMBOL_ENDPOINT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <semaphore>
#include <span>
#include <string>
#include <vector>

#include "cli/client/target.h"
#include "cli/exporter/http_server.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// Names code addresses of a live local target: one name per address, ""
// where none is known. The exporter command wires in NameProcessAddresses
// (process_symbols.h).
using SymbolLookup =
    std::function<Result<std::vector<std::string>>(const Target&, std::span<const uint64_t>)>;

// How many symbol requests are answered at once (each opens the target's
// binaries and their debug information on this host), and how long one more
// waits for its turn before it is turned away with 429: pprof asks once per
// mapping, one request after the other, and fails on the first refusal.
inline constexpr size_t kMaxSymbolRequests = 2;
inline constexpr std::chrono::seconds kSymbolTurnWait(10);

// /debug/pprof/symbol, the protocol of Go's net/http/pprof that the pprof CLI
// uses for the mappings a profile does not name completely (stripped
// binaries and libraries: every real service). pprof derives its URL from
// the profile's by replacing the last path element and dropping the query,
// so /debug/pprof/pid/N/heap leads it to /debug/pprof/pid/N/symbol, which
// the router hands here with pid=N:
//   GET  "num_symbols: 1" (symbols are served here)
//   POST "0xADDR+0xADDR..." (symbol_query.h): "0xADDR NAME" for each address
//        the process has a name for, looked up now in its own files.
// Without a pid (a profile fetched as /debug/pprof/heap?pid=N leads pprof
// to plain /debug/pprof/symbol) there is no process to ask: GET says
// "num_symbols: 0" and POST names nothing (200, empty), so pprof keeps the
// names the profile has and shows the rest as addresses. Failures as
// PprofError (404 no agent for the pid, 403 its socket is not trusted, 400
// a malformed request). Thread-safe.
class SymbolEndpoint {
 public:
  SymbolEndpoint(const TargetDiscovery& discovery, SymbolLookup lookup,
                 size_t max_in_flight = kMaxSymbolRequests,
                 std::chrono::milliseconds turn_wait = kSymbolTurnWait);

  HttpResponse Handle(const HttpRequest& request);

 private:
  HttpResponse Symbolize(const Target& target, std::span<const uint64_t> addresses);

  const TargetDiscovery& discovery_;
  SymbolLookup lookup_;
  std::counting_semaphore<> turns_;
  const size_t max_in_flight_;
  const std::chrono::milliseconds turn_wait_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_SYMBOL_ENDPOINT_H_
