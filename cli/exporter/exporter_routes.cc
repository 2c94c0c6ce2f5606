#include "cli/exporter/exporter_routes.h"

#include <utility>

#include "cli/exporter/html_pages.h"
#include "cli/exporter/prometheus_renderer.h"

namespace memprof::cli {
namespace {

HttpResponse MethodNotAllowed(const char* allowed) {
  return HttpResponse{
      405, kPlainText, std::string("only ") + allowed + " allowed here\n", {{"Allow", allowed}}};
}

HttpResponse Page(const std::function<Result<std::string>()>& render, const char* content_type) {
  auto body = render();
  if (!body) return HttpResponse{500, kPlainText, body.error().message + "\n", {}};
  return HttpResponse{200, content_type, std::move(*body), {}};
}

}  // namespace

HttpResponse RouteExporterRequest(const HttpRequest& request, const ExporterPages& pages) {
  const std::string& path = request.path;
  const bool known = path == "/" || path == kMetricsPath || path == kPprofIndexPath ||
                     path == "/debug/pprof" || path == kPprofHeapPath;
  if (!known) {
    return HttpResponse{404,
                        kPlainText,
                        "not found: the metrics are at /metrics, the heap profiles under "
                        "/debug/pprof/ (see / for all endpoints)\n",
                        {}};
  }
  if (path == kPprofHeapPath) {
    return request.method == "GET" ? pages.heap(request) : MethodNotAllowed("GET");
  }
  if (request.method != "GET" && request.method != "HEAD") return MethodNotAllowed("GET, HEAD");
  if (path == "/") return HttpResponse{200, kHtmlContentType, RenderLandingPage(), {}};
  if (path == kMetricsPath) return Page(pages.metrics, kPrometheusContentType);
  return Page(pages.pprof_index, kHtmlContentType);
}

}  // namespace memprof::cli
