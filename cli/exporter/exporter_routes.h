#ifndef MEMPROF_CLI_EXPORTER_EXPORTER_ROUTES_H_
#define MEMPROF_CLI_EXPORTER_EXPORTER_ROUTES_H_

#include <functional>
#include <optional>
#include <string>

#include "cli/exporter/http_server.h"
#include "common/result.h"

namespace memprof::cli {

inline constexpr char kMetricsPath[] = "/metrics";
inline constexpr char kPprofIndexPath[] = "/debug/pprof/";
inline constexpr char kPprofHeapPath[] = "/debug/pprof/heap";
inline constexpr char kPprofAllocsPath[] = "/debug/pprof/allocs";
inline constexpr char kPprofSymbolPath[] = "/debug/pprof/symbol";
// /debug/pprof/pid/N/{heap,allocs,symbol}: one process's.
inline constexpr char kPprofTargetPrefix[] = "/debug/pprof/pid/";

// What the exporter serves, a function per page (the exporter command
// wires them to the targets).
struct ExporterPages {
  std::function<Result<std::string>()> metrics;      // the Prometheus exposition
  std::function<Result<std::string>()> pprof_index;  // the /debug/pprof/ HTML
  std::function<HttpResponse(const HttpRequest&)> heap;
  std::function<HttpResponse(const HttpRequest&)> allocs;
  std::function<HttpResponse(const HttpRequest&)> symbol;
};

// Where each request goes:
//   /                         the landing page (HTML, the endpoints)
//   /metrics                  pages.metrics (500 with the reason if it fails)
//   /debug/pprof/ (and without the slash)   pages.pprof_index
//   /debug/pprof/heap         pages.heap (GET only: a HEAD would still make
//                             the target dump)
//   /debug/pprof/allocs       pages.allocs (GET only, likewise)
//   /debug/pprof/symbol       pages.symbol (GET and POST)
//   /debug/pprof/pid/N/heap, /debug/pprof/pid/N/allocs,
//   /debug/pprof/pid/N/symbol the same with pid=N (TargetScopedRequest)
// GET and HEAD only elsewhere (405 with Allow otherwise); any other path is
// 404, pointing to /.
HttpResponse RouteExporterRequest(const HttpRequest& request, const ExporterPages& pages);

// /debug/pprof/pid/N/NAME (NAME heap, allocs or symbol) as /debug/pprof/NAME?pid=N:
// the request with that path and pid=N first in its query (so a pid= of its
// own makes the pid "given twice"); nullopt for any other path. pprof needs
// the pid in the path: it finds the symbol endpoint of a profile by
// replacing the last element of the profile's path, and drops the query.
std::optional<HttpRequest> TargetScopedRequest(const HttpRequest& request);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_EXPORTER_ROUTES_H_
