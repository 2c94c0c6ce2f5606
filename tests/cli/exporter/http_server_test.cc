// The libmicrohttpd wrapper and the exporter's routing, over real loopback
// sockets.
#include "cli/exporter/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>

#include "cli/exporter/exporter_routes.h"
#include "cli/exporter/html_pages.h"
#include "cli/exporter/prometheus_renderer.h"
#include "tests/support/http_client.h"

namespace memprof::cli {
namespace {

// The shared HTTP/1.0 test client, to a ListenAddress.
test_support::HttpReply HttpRequestTo(const ListenAddress& address, const std::string& method,
                                      const std::string& path, const std::string& extra_body = "") {
  return test_support::HttpRequest(reinterpret_cast<const sockaddr*>(&address.storage),
                                   address.length, method, path, "test", extra_body);
}

ListenAddress AnyPort() {
  auto address = ParseListenAddress("127.0.0.1:0");
  EXPECT_TRUE(address);
  return *address;
}

TEST(HttpServerTest, ServesTheHandlersAnswerOnTheBoundPort) {
  std::atomic<int> calls{0};
  auto server = HttpServer::Start(AnyPort(), [&calls](const HttpRequest& r) {
    ++calls;
    return HttpResponse{201, "text/x-test", r.method + " " + r.path, {{"X-Extra", "yes"}}};
  });
  ASSERT_TRUE(server) << server.error().message;
  const ListenAddress& bound = (*server)->address();
  EXPECT_NE(bound.port(), 0) << "port 0 reports the port the kernel chose";
  auto reply = HttpRequestTo(bound, "GET", "/some/path?query=1");
  EXPECT_EQ(reply.status, 201) << reply.headers;
  EXPECT_EQ(reply.body, "GET /some/path");
  EXPECT_NE(reply.headers.find("Content-Type: text/x-test"), std::string::npos) << reply.headers;
  EXPECT_NE(reply.headers.find("X-Extra: yes"), std::string::npos) << reply.headers;
  EXPECT_EQ(calls.load(), 1);
}

TEST(HttpServerTest, AHandlerThatThrowsIsA500AndTheServerGoesOn) {
  auto server = HttpServer::Start(AnyPort(), [](const HttpRequest& r) -> HttpResponse {
    if (r.path == "/boom") throw std::runtime_error("boom");
    return HttpResponse{200, "text/plain", "fine", {}};
  });
  ASSERT_TRUE(server) << server.error().message;
  EXPECT_EQ(HttpRequestTo((*server)->address(), "GET", "/boom").status, 500);
  EXPECT_EQ(HttpRequestTo((*server)->address(), "GET", "/ok").body, "fine");
}

// pprof's symbol requests are POSTs: the handler gets the whole body.
TEST(HttpServerTest, APostBodyReachesTheHandlerWhole) {
  auto server = HttpServer::Start(AnyPort(), [](const HttpRequest& r) {
    return HttpResponse{200, "text/plain", r.method + " [" + r.body + "]", {}};
  });
  ASSERT_TRUE(server) << server.error().message;
  const std::string body = "0x4a1f2c+" + std::string(100000, 'a');
  EXPECT_EQ(HttpRequestTo((*server)->address(), "POST", "/debug/pprof/symbol", body).body,
            "POST [" + body + "]");
  EXPECT_EQ(HttpRequestTo((*server)->address(), "GET", "/metrics").body, "GET []");
}

TEST(HttpServerTest, ABodyOverTheLimitIsA413AndTheHandlerNeverRuns) {
  std::atomic<int> calls{0};
  HttpServerLimits limits;
  limits.max_body_bytes = 1000;
  auto server = HttpServer::Start(
      AnyPort(),
      [&calls](const HttpRequest&) {
        ++calls;
        return HttpResponse{};
      },
      limits);
  ASSERT_TRUE(server) << server.error().message;
  test_support::HttpReply r =
      HttpRequestTo((*server)->address(), "POST", "/debug/pprof/symbol", std::string(1001, 'a'));
  EXPECT_EQ(r.status, 413) << r.headers;
  EXPECT_EQ(r.body, "the request body is over the limit of 1000 bytes\n");
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(HttpRequestTo((*server)->address(), "POST", "/x", std::string(1000, 'a')).status, 200)
      << "up to the limit is fine";
}

TEST(HttpServerTest, APortInUseIsAClearError) {
  auto first = HttpServer::Start(AnyPort(), [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_TRUE(first) << first.error().message;
  auto second =
      HttpServer::Start((*first)->address(), [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("cannot listen on " + (*first)->address().ToString() +
                                        ": Address already in use"),
            std::string::npos)
      << second.error().message;
}

TEST(HttpServerTest, StoppedServerRefusesConnections) {
  auto server = HttpServer::Start(AnyPort(), [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_TRUE(server) << server.error().message;
  const ListenAddress address = (*server)->address();
  server->reset();
  EXPECT_EQ(HttpRequestTo(address, "GET", "/").status, 0) << "the listening socket is closed";
}

Result<std::string> Exposition() { return std::string("memprof_up{pid=\"1\"} 1\n"); }

ExporterPages Pages(std::function<Result<std::string>()> metrics = Exposition) {
  ExporterPages pages;
  pages.metrics = std::move(metrics);
  pages.pprof_index = [] { return Result<std::string>("<p>index</p>"); };
  pages.heap = [](const HttpRequest& r) {
    return HttpResponse{200, "application/octet-stream", "heap of " + *r.Argument("pid"), {}};
  };
  pages.allocs = [](const HttpRequest& r) {
    return HttpResponse{200, "application/octet-stream", "allocs of " + *r.Argument("pid"), {}};
  };
  pages.symbol = [](const HttpRequest& r) {
    const std::string* pid = r.Argument("pid");
    return HttpResponse{
        200, kPlainText, r.method + " symbol of " + (pid ? *pid : "none") + ": " + r.body, {}};
  };
  return pages;
}

TEST(ExporterRoutingTest, MetricsOtherPathsAndMethods) {
  HttpResponse ok = RouteExporterRequest({"GET", "/metrics", {}}, Pages());
  EXPECT_EQ(ok.status, 200u);
  EXPECT_EQ(ok.content_type, kPrometheusContentType);
  EXPECT_EQ(ok.body, "memprof_up{pid=\"1\"} 1\n");
  EXPECT_EQ(RouteExporterRequest({"HEAD", "/metrics", {}}, Pages()).status, 200u);
  for (const char* path :
       {"/metrics/", "/favicon.ico", "/metricsx", "/debug/pprof/heapx", "/debug/pprof/profile"}) {
    HttpResponse r = RouteExporterRequest({"GET", path, {}}, Pages());
    EXPECT_EQ(r.status, 404u) << path;
    EXPECT_NE(r.body.find("see / for all endpoints"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("the heap and allocation profiles under /debug/pprof/"),
              std::string::npos)
        << r.body;
  }
  HttpResponse post = RouteExporterRequest({"POST", "/metrics", {}}, Pages());
  EXPECT_EQ(post.status, 405u);
  ASSERT_EQ(post.headers.size(), 1u);
  EXPECT_EQ(post.headers[0], (std::pair<std::string, std::string>{"Allow", "GET, HEAD"}));
}

TEST(ExporterRoutingTest, AScrapeThatCannotListTargetsIsA500WithTheReason) {
  HttpResponse r =
      RouteExporterRequest({"GET", "/metrics", {}}, Pages([]() -> Result<std::string> {
                             return Fail(ErrorCode::kPermissionDenied, "cannot read /tmp/memprof");
                           }));
  EXPECT_EQ(r.status, 500u);
  EXPECT_EQ(r.body, "cannot read /tmp/memprof\n");
}

// A handler that takes long (a heap profile over S seconds) holds up only its
// own connection: every connection has its own thread.
TEST(HttpServerTest, ASlowHandlerDoesNotHoldUpOtherRequests) {
  constexpr int kSlow = 3;  // more than one thread's worth
  std::mutex mu;
  std::condition_variable cv;
  int waiting = 0;
  bool released = false;
  auto server = HttpServer::Start(AnyPort(), [&](const HttpRequest& r) {
    std::unique_lock lock(mu);
    if (r.path == "/slow") {
      ++waiting;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(30), [&] { return released; });
      return HttpResponse{200, "text/plain", released ? "released" : "timed out", {}};
    }
    released = true;
    cv.notify_all();
    return HttpResponse{200, "text/plain", "fast", {}};
  });
  ASSERT_TRUE(server) << server.error().message;
  const ListenAddress address = (*server)->address();
  std::vector<std::future<test_support::HttpReply>> slow;
  for (int i = 0; i < kSlow; ++i) {
    slow.push_back(
        std::async(std::launch::async, [&] { return HttpRequestTo(address, "GET", "/slow"); }));
  }
  {
    // All of them are in their handlers at once, each holding its thread.
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return waiting == kSlow; }))
        << waiting << " of " << kSlow << " slow requests got a thread";
  }
  EXPECT_EQ(HttpRequestTo(address, "GET", "/fast").body, "fast");
  for (auto& s : slow) EXPECT_EQ(s.get().body, "released");
}

TEST(ExporterRoutingTest, LandingPageIndexAndHeap) {
  HttpResponse landing = RouteExporterRequest({"GET", "/", {}}, Pages());
  EXPECT_EQ(landing.status, 200u);
  EXPECT_EQ(landing.content_type, kHtmlContentType);
  for (const char* link :
       {"href=\"/metrics\"", "href=\"/debug/pprof/\"", "/debug/pprof/pid/N/heap?seconds=S",
        "/debug/pprof/pid/N/symbol", "/debug/pprof/heap?pid=N&amp;seconds=S",
        "/debug/pprof/pid/N/allocs?seconds=S", "/debug/pprof/allocs?pid=N&amp;seconds=S"}) {
    EXPECT_NE(landing.body.find(link), std::string::npos) << link << "\n" << landing.body;
  }
  for (const char* path : {"/debug/pprof/", "/debug/pprof"}) {
    HttpResponse index = RouteExporterRequest({"GET", path, {}}, Pages());
    EXPECT_EQ(index.status, 200u) << path;
    EXPECT_EQ(index.body, "<p>index</p>");
  }
  HttpResponse heap = RouteExporterRequest({"GET", "/debug/pprof/heap", {{"pid", "7"}}}, Pages());
  EXPECT_EQ(heap.body, "heap of 7");
  HttpResponse head = RouteExporterRequest({"HEAD", "/debug/pprof/heap", {{"pid", "7"}}}, Pages());
  EXPECT_EQ(head.status, 405u) << "a HEAD would still make the target dump";
  HttpResponse allocs =
      RouteExporterRequest({"GET", "/debug/pprof/allocs", {{"pid", "7"}}}, Pages());
  EXPECT_EQ(allocs.body, "allocs of 7");
  HttpResponse post = RouteExporterRequest({"POST", "/debug/pprof/allocs", {}}, Pages());
  EXPECT_EQ(post.status, 405u) << "it opens a window in the target";
  ASSERT_EQ(post.headers.size(), 1u);
  EXPECT_EQ(post.headers[0], (std::pair<std::string, std::string>{"Allow", "GET"}));
}

// pprof finds a profile's symbol endpoint by replacing the last element of
// its path (and dropping the query): the per-target paths carry the pid.
TEST(ExporterRoutingTest, PerTargetPathsAreThePagesWithThePid) {
  EXPECT_EQ(
      RouteExporterRequest({"GET", "/debug/pprof/pid/7/heap", {{"seconds", "5"}}}, Pages()).body,
      "heap of 7");
  EXPECT_EQ(
      RouteExporterRequest({"GET", "/debug/pprof/pid/7/allocs", {{"seconds", "5"}}}, Pages()).body,
      "allocs of 7");
  EXPECT_EQ(
      RouteExporterRequest({"POST", "/debug/pprof/pid/7/symbol", {}, "0x1+0x2"}, Pages()).body,
      "POST symbol of 7: 0x1+0x2");
  EXPECT_EQ(RouteExporterRequest({"POST", "/debug/pprof/symbol", {}, "0x1"}, Pages()).body,
            "POST symbol of none: 0x1");
  EXPECT_EQ(RouteExporterRequest({"GET", "/debug/pprof/symbol", {}}, Pages()).status, 200u);
  HttpResponse put = RouteExporterRequest({"PUT", "/debug/pprof/pid/7/symbol", {}}, Pages());
  EXPECT_EQ(put.status, 405u);
  ASSERT_EQ(put.headers.size(), 1u);
  EXPECT_EQ(put.headers[0], (std::pair<std::string, std::string>{"Allow", "GET, POST"}));
  EXPECT_EQ(RouteExporterRequest({"HEAD", "/debug/pprof/pid/7/heap", {}}, Pages()).status, 405u);
  for (const char* path : {"/debug/pprof/pid/7/profile", "/debug/pprof/pid/7", "/debug/pprof/pid/",
                           "/debug/pprof/pid/7/heap/", "/debug/pprof/pid/7/8/heap"}) {
    EXPECT_EQ(RouteExporterRequest({"GET", path, {}}, Pages()).status, 404u) << path;
  }
  auto scoped = TargetScopedRequest({"GET", "/debug/pprof/pid/abc/heap", {{"pid", "9"}}});
  ASSERT_TRUE(scoped);
  EXPECT_EQ(scoped->path, "/debug/pprof/heap");
  EXPECT_EQ(scoped->query,
            (std::vector<std::pair<std::string, std::string>>{{"pid", "abc"}, {"pid", "9"}}))
      << "the heap query then says the pid is not a number, or given twice";
}

TEST(HttpServerTest, QueryArgumentsReachTheHandlerDecoded) {
  auto server = HttpServer::Start(AnyPort(), [](const HttpRequest& r) {
    std::string body;
    for (const auto& [k, v] : r.query) body += "[" + k + "=" + v + "]";
    return HttpResponse{200, "text/plain", body, {}};
  });
  ASSERT_TRUE(server) << server.error().message;
  EXPECT_EQ(HttpRequestTo((*server)->address(), "GET", "/x?pid=12&seconds=3&a%20b=c%26d&flag").body,
            "[pid=12][seconds=3][a b=c&d][flag=]");
}

}  // namespace
}  // namespace memprof::cli
