#include "cli/exporter/exporter_routes.h"

#include <cstring>
#include <string_view>
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

bool KnownPath(const std::string& path) {
  return path == "/" || path == kMetricsPath || path == kPprofIndexPath || path == "/debug/pprof" ||
         path == kPprofHeapPath || path == kPprofAllocsPath || path == kPprofSymbolPath;
}

}  // namespace

std::optional<HttpRequest> TargetScopedRequest(const HttpRequest& request) {
  std::string_view rest = request.path;
  if (!rest.starts_with(kPprofTargetPrefix)) return std::nullopt;
  rest.remove_prefix(std::strlen(kPprofTargetPrefix));
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view name = rest.substr(slash + 1);
  if (name != "heap" && name != "allocs" && name != "symbol") return std::nullopt;
  HttpRequest scoped = request;
  scoped.path = std::string(kPprofIndexPath) + std::string(name);
  scoped.query.insert(scoped.query.begin(), {"pid", std::string(rest.substr(0, slash))});
  return scoped;
}

HttpResponse RouteExporterRequest(const HttpRequest& request, const ExporterPages& pages) {
  if (auto scoped = TargetScopedRequest(request)) return RouteExporterRequest(*scoped, pages);
  const std::string& path = request.path;
  if (!KnownPath(path)) {
    return HttpResponse{404,
                        kPlainText,
                        "not found: the metrics are at /metrics, the heap and allocation "
                        "profiles under /debug/pprof/ (see / for all endpoints)\n",
                        {}};
  }
  if (path == kPprofHeapPath || path == kPprofAllocsPath) {
    if (request.method != "GET") return MethodNotAllowed("GET");
    return path == kPprofHeapPath ? pages.heap(request) : pages.allocs(request);
  }
  if (path == kPprofSymbolPath) {
    const bool allowed = request.method == "GET" || request.method == "POST";
    return allowed ? pages.symbol(request) : MethodNotAllowed("GET, POST");
  }
  if (request.method != "GET" && request.method != "HEAD") return MethodNotAllowed("GET, HEAD");
  if (path == "/") return HttpResponse{200, kHtmlContentType, RenderLandingPage(), {}};
  if (path == kMetricsPath) return Page(pages.metrics, kPrometheusContentType);
  return Page(pages.pprof_index, kHtmlContentType);
}

}  // namespace memprof::cli
