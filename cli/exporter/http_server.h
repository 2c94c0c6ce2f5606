#ifndef MEMPROF_CLI_EXPORTER_HTTP_SERVER_H_
#define MEMPROF_CLI_EXPORTER_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/exporter/listen_address.h"
#include "common/result.h"

struct MHD_Daemon;

namespace memprof::cli {

struct MicrohttpdApi;

struct HttpRequest {
  std::string method;  // "GET", "HEAD", ...
  std::string path;    // without the query string
  // The query's arguments, decoded, in their order ("?pid=1&x" is
  // {{"pid", "1"}, {"x", ""}}).
  std::vector<std::pair<std::string, std::string>> query;
  std::string body = {};  // what a POST sent (at most HttpServerLimits::max_body_bytes)

  // The value of the first argument named `name`; nullptr if there is none.
  const std::string* Argument(const std::string& name) const;
};

// The content type of plain-text answers: errors, notes, the metrics.
inline constexpr char kPlainText[] = "text/plain; charset=utf-8";

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = kPlainText;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, e.g. Allow
};

// Called on the connection's own thread, concurrently for several
// connections; must be thread-safe, and may block (only its own connection
// waits). An exception becomes a 500 and is logged, never escapes.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// What a client (or many) can make the server hold.
struct HttpServerLimits {
  unsigned max_connections = 32;     // open connections (and so threads), all clients together
  unsigned per_ip_connections = 8;   // open connections from one address
  unsigned idle_timeout_seconds = 30;
  // A request body is read whole before the handler runs, up to this many
  // bytes: a longer one is answered 413 at once when its Content-Length
  // says so, and ends the connection when it is sent without a length.
  size_t max_body_bytes = 1 << 20;
};

// A small HTTP/1.1 server over GNU libmicrohttpd (loaded when the first one
// starts): a thread per connection, so that a handler that takes long (a
// heap profile over S seconds) holds up only its own connection, with the
// number of connections (so of threads) bounded, and idle timeouts. The listening socket is bound
// by Start() itself, so a bind error has its own message and "port 0" reports the port the kernel
// chose. Request bodies are read up to a bound (HttpServerLimits). Destruction stops accepting,
// waits for handlers in progress and closes everything.
class HttpServer {
 public:
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> Start(
      const ListenAddress& address, HttpHandler handler, const HttpServerLimits& limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The address as bound (with the real port when 0 was asked for).
  const ListenAddress& address() const { return address_; }

  // The library functions this server calls.
  const MicrohttpdApi& mhd() const { return mhd_; }
  const HttpServerLimits& limits() const { return limits_; }

  // Runs the handler (on a server thread); an exception becomes a 500.
  HttpResponse Handle(const HttpRequest& request) const;

 private:
  HttpServer(const MicrohttpdApi& mhd, HttpHandler handler, ListenAddress address,
             const HttpServerLimits& limits);

  const MicrohttpdApi& mhd_;
  HttpHandler handler_;
  ListenAddress address_;
  HttpServerLimits limits_;
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_HTTP_SERVER_H_
