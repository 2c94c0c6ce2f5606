#ifndef MEMPROF_CLI_EXPORTER_EXPORTER_ROUTES_H_
#define MEMPROF_CLI_EXPORTER_EXPORTER_ROUTES_H_

#include <functional>
#include <string>

#include "cli/exporter/http_server.h"
#include "common/result.h"

namespace memprof::cli {

inline constexpr char kMetricsPath[] = "/metrics";
inline constexpr char kPprofIndexPath[] = "/debug/pprof/";
inline constexpr char kPprofHeapPath[] = "/debug/pprof/heap";

// What the exporter serves, a function per page (the exporter command
// wires them to the targets).
struct ExporterPages {
  std::function<Result<std::string>()> metrics;      // the Prometheus exposition
  std::function<Result<std::string>()> pprof_index;  // the /debug/pprof/ HTML
  std::function<HttpResponse(const HttpRequest&)> heap;
};

// Where each request goes:
//   /                         the landing page (HTML, the endpoints)
//   /metrics                  pages.metrics (500 with the reason if it fails)
//   /debug/pprof/ (and without the slash)   pages.pprof_index
//   /debug/pprof/heap         pages.heap (GET only: a HEAD would still make
//                             the target dump)
// GET and HEAD only (405 with Allow otherwise); any other path is 404,
// pointing to /.
HttpResponse RouteExporterRequest(const HttpRequest& request, const ExporterPages& pages);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_EXPORTER_ROUTES_H_
