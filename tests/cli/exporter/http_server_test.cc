// The libmicrohttpd wrapper and the exporter's routing, over real loopback
// sockets.
#include "cli/exporter/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "cli/commands/exporter_command.h"
#include "cli/exporter/prometheus_renderer.h"
#include "tests/support/http_client.h"

namespace memprof::cli {
namespace {

// The shared HTTP/1.0 test client, to a ListenAddress.
test_support::HttpReply HttpRequestTo(const ListenAddress& address, const std::string& method,
                                      const std::string& path,
                                      const std::string& extra_body = "") {
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

TEST(HttpServerTest, ABodyIsNeverReadButTheClientGetsItsAnswer) {
  auto server = HttpServer::Start(AnyPort(), [](const HttpRequest& r) {
    return HttpResponse{r.method == "POST" ? 405u : 200u, "text/plain", "no\n", {}};
  });
  ASSERT_TRUE(server) << server.error().message;
  EXPECT_EQ(HttpRequestTo((*server)->address(), "POST", "/metrics", "a=1&b=2").status, 405);
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

TEST(ExporterRoutingTest, MetricsOtherPathsAndMethods) {
  HttpResponse ok = RouteExporterRequest({"GET", "/metrics"}, Exposition);
  EXPECT_EQ(ok.status, 200u);
  EXPECT_EQ(ok.content_type, kPrometheusContentType);
  EXPECT_EQ(ok.body, "memprof_up{pid=\"1\"} 1\n");
  EXPECT_EQ(RouteExporterRequest({"HEAD", "/metrics"}, Exposition).status, 200u);
  for (const char* path : {"/", "/metrics/", "/favicon.ico", "/metricsx"}) {
    EXPECT_EQ(RouteExporterRequest({"GET", path}, Exposition).status, 404u) << path;
  }
  HttpResponse post = RouteExporterRequest({"POST", "/metrics"}, Exposition);
  EXPECT_EQ(post.status, 405u);
  ASSERT_EQ(post.headers.size(), 1u);
  EXPECT_EQ(post.headers[0], (std::pair<std::string, std::string>{"Allow", "GET, HEAD"}));
}

TEST(ExporterRoutingTest, AScrapeThatCannotListTargetsIsA500WithTheReason) {
  HttpResponse r = RouteExporterRequest({"GET", "/metrics"}, []() -> Result<std::string> {
    return Fail(ErrorCode::kPermissionDenied, "cannot read /tmp/memprof");
  });
  EXPECT_EQ(r.status, 500u);
  EXPECT_EQ(r.body, "cannot read /tmp/memprof\n");
}

}  // namespace
}  // namespace memprof::cli
