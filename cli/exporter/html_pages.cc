#include "cli/exporter/html_pages.h"

#include "cli/exporter/exporter_routes.h"
#include "cli/exporter/heap_query.h"
#include "cli/exporter/prometheus_renderer.h"

namespace memprof::cli {
namespace {

constexpr char kHead[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
constexpr char kStyle[] =
    "</title>\n<style>body{font-family:sans-serif} td,th{padding:0 1em 0 0;text-align:left}"
    " code{white-space:pre-wrap}</style>\n</head>\n<body>\n";
constexpr char kTail[] = "</body>\n</html>\n";

std::string Page(std::string_view title, std::string_view body) {
  std::string page = kHead;
  page += title;
  page += kStyle;
  page += body;
  page += kTail;
  return page;
}

std::string Row(const PprofTarget& t) {
  const std::string pid = std::to_string(t.pid);
  std::string row = "<tr><td>" + pid + "</td><td>" + HtmlEscape(t.command) + "</td><td><code>" +
                    HtmlEscape(t.command_line) + "</code></td><td>" + HtmlEscape(t.profiling) +
                    "</td><td>";
  const std::string base = std::string(kPprofTargetPrefix) + pid;
  if (t.profilable) {
    row += "<a href=\"" + base + "/heap\">heap</a> <a href=\"" + base +
           "/heap?seconds=30\">heap over 30s</a>";
  }
  if (t.allocations) row += " <a href=\"" + base + "/allocs\">allocations over 30s</a>";
  return row + "</td></tr>\n";
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (const char c : ValidUtf8(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderLandingPage() {
  const std::string range =
      std::to_string(kMinHeapSeconds.count()) + " to " + std::to_string(kMaxHeapSeconds.count());
  return Page("memprofctl exporter",
              "<h1>memprofctl exporter</h1>\n<ul>\n"
              "<li><a href=\"/metrics\">/metrics</a>: the statistics of every local agent, "
              "for Prometheus</li>\n"
              "<li><a href=\"/debug/pprof/\">/debug/pprof/</a>: the targets, with links to "
              "their heap and allocation profiles</li>\n"
              "<li><code>/debug/pprof/pid/N/heap</code>: pid N's heap as a symbolized, "
              "gzipped pprof profile of what has been sampled so far (profiling must be "
              "active)</li>\n"
              "<li><code>/debug/pprof/pid/N/heap?seconds=S</code>: profile for S seconds "
              "(" +
                  range +
                  ") first, then leave profiling as it was</li>\n"
                  "<li><code>/debug/pprof/pid/N/allocs?seconds=S</code>: what pid N allocates "
                  "during the next S seconds (" +
                  range + ", default " + std::to_string(kDefaultAllocsSeconds.count()) +
                  "), as a pprof profile (alloc_space: allocated in the window; inuse_space: "
                  "of that, still live at its end); jemalloc only</li>\n"
                  "<li><code>/debug/pprof/pid/N/symbol</code>: names of addresses in pid N, "
                  "which pprof asks for what a profile leaves unnamed</li>\n"
                  "<li><code>/debug/pprof/heap?pid=N</code>, "
                  "<code>/debug/pprof/heap?pid=N&amp;seconds=S</code>, "
                  "<code>/debug/pprof/allocs?pid=N&amp;seconds=S</code>: the same profiles "
                  "with the pid as a parameter, for scrapers that set parameters (pprof's "
                  "symbol requests for these cannot say which process)</li>\n</ul>\n");
}

std::string RenderPprofIndex(const std::vector<PprofTarget>& targets) {
  std::string body =
      "<h1>/debug/pprof/</h1>\n<p>Heap and allocation profiles of the local memprof agents "
      "(<a href=\"/\">all endpoints</a>). <code>pprof "
      "http://HOST:PORT/debug/pprof/pid/N/heap</code> reads them.</p>\n";
  if (targets.empty()) return Page("/debug/pprof/", body + "<p>No agents found.</p>\n");
  body +=
      "<table>\n<tr><th>pid</th><th>command</th><th>command line</th><th>profiling</th>"
      "<th>profiles</th></tr>\n";
  for (const PprofTarget& t : targets) body += Row(t);
  return Page("/debug/pprof/", body + "</table>\n");
}

}  // namespace memprof::cli
