#include "cli/exporter/http_server.h"

#include <microhttpd.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>

#include "cli/exporter/microhttpd_library.h"
#include "cli/io/logging.h"
#include "common/fd.h"

namespace memprof::cli {
namespace {

constexpr int kListenBacklog = 64;

void LogFromMhd(void*, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof(line), format, args);
  std::string text(line);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  Log().debug("http: {}", text);
}

ErrorCode BindErrorCode(int err) {
  if (err == EACCES || err == EPERM) return ErrorCode::kPermissionDenied;
  if (err == EADDRNOTAVAIL) return ErrorCode::kInvalidArgument;
  return ErrorCode::kInternal;
}

Result<Fd> BindListener(const ListenAddress& address) {
  Fd fd(::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  const int one = 1;
  if (!fd || ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) != 0 ||
      ::listen(fd.get(), kListenBacklog) != 0) {
    const int err = errno;
    std::string hint = err == EADDRINUSE ? " (is another exporter running? pick another port)"
                       : err == EADDRNOTAVAIL ? " (no interface of this host has that address)"
                                              : "";
    return Fail(BindErrorCode(err), "cannot listen on " + address.ToString() + ": " +
                                        std::strerror(err) + hint);
  }
  return fd;
}

MHD_Result Queue(const MicrohttpdApi& mhd, MHD_Connection* connection,
                 const HttpResponse& response) {
  MHD_Response* r = mhd.create_response_from_buffer(
      response.body.size(), const_cast<char*>(response.body.data()), MHD_RESPMEM_MUST_COPY);
  if (r == nullptr) return MHD_NO;
  mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, response.content_type.c_str());
  for (const auto& [name, value] : response.headers) {
    mhd.add_response_header(r, name.c_str(), value.c_str());
  }
  const MHD_Result queued = mhd.queue_response(connection, response.status, r);
  mhd.destroy_response(r);
  return queued;
}

MHD_Result CollectArgument(void* query, MHD_ValueKind /*kind*/, const char* key,
                           const char* value) {
  static_cast<std::vector<std::pair<std::string, std::string>>*>(query)->emplace_back(
      key != nullptr ? key : "", value != nullptr ? value : "");
  return MHD_YES;
}

// The Content-Length the client declared, if any.
std::optional<size_t> DeclaredLength(const MicrohttpdApi& mhd, MHD_Connection* connection) {
  const char* text =
      mhd.lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (text == nullptr) return std::nullopt;
  size_t length = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, length);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return length;
}

HttpResponse BodyTooLarge(size_t limit) {
  return HttpResponse{413,
                      kPlainText,
                      "the request body is over the limit of " + std::to_string(limit) + " bytes\n",
                      {}};
}

// libmicrohttpd calls this for every request: once with the headers, then
// for each piece of a body, then once more when the request is complete,
// which is when the handler runs. `request_state` holds the body so far
// (ReleaseRequestState frees it).
MHD_Result Dispatch(void* self, MHD_Connection* connection, const char* url, const char* method,
                    const char* /*version*/, const char* upload_data, size_t* upload_size,
                    void** request_state) {
  const auto* server = static_cast<const HttpServer*>(self);
  const size_t limit = server->limits().max_body_bytes;
  auto* body = static_cast<std::string*>(*request_state);
  if (body == nullptr) {
    if (DeclaredLength(server->mhd(), connection).value_or(0) > limit) {
      return Queue(server->mhd(), connection, BodyTooLarge(limit));
    }
    *request_state = new std::string();
    return MHD_YES;
  }
  if (*upload_size != 0) {
    // Sent without a length, or longer than it said: the bound ends it.
    if (*upload_size > limit - body->size()) return MHD_NO;
    body->append(upload_data, *upload_size);
    *upload_size = 0;
    return MHD_YES;
  }
  HttpRequest request{
      method != nullptr ? method : "", url != nullptr ? url : "", {}, std::move(*body)};
  server->mhd().get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &CollectArgument,
                                      &request.query);
  return Queue(server->mhd(), connection, server->Handle(request));
}

void ReleaseRequestState(void* /*cls*/, MHD_Connection* /*connection*/, void** request_state,
                         MHD_RequestTerminationCode /*why*/) {
  delete static_cast<std::string*>(*request_state);
  *request_state = nullptr;
}

}  // namespace

HttpServer::HttpServer(const MicrohttpdApi& mhd, HttpHandler handler, ListenAddress address,
                       const HttpServerLimits& limits)
    : mhd_(mhd), handler_(std::move(handler)), address_(address), limits_(limits) {}

HttpServer::~HttpServer() {
  if (daemon_ != nullptr) mhd_.stop_daemon(daemon_);
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ListenAddress& address,
                                                      HttpHandler handler,
                                                      const HttpServerLimits& limits) {
  auto mhd = Microhttpd();
  if (!mhd) return Fail(mhd.error());
  auto listener = BindListener(address);
  if (!listener) return Fail(listener.error());
  auto bound = LocalAddressOf(listener->get());
  if (!bound) return Fail(bound.error());
  std::unique_ptr<HttpServer> server(new HttpServer(**mhd, std::move(handler), *bound, limits));
  server->daemon_ = (*mhd)->start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG, 0,
      nullptr, nullptr, &Dispatch, server.get(), MHD_OPTION_EXTERNAL_LOGGER, &LogFromMhd, nullptr,
      MHD_OPTION_NOTIFY_COMPLETED, &ReleaseRequestState, nullptr, MHD_OPTION_LISTEN_SOCKET,
      static_cast<MHD_socket>(listener->get()), MHD_OPTION_CONNECTION_LIMIT, limits.max_connections,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, limits.per_ip_connections, MHD_OPTION_CONNECTION_TIMEOUT,
      limits.idle_timeout_seconds, MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    return Fail(ErrorCode::kInternal, "cannot start the HTTP server on " + bound->ToString() +
                                          " (run with -vv for libmicrohttpd's reason)");
  }
  listener->Release();  // the daemon owns and closes it now
  return server;
}

const std::string* HttpRequest::Argument(const std::string& name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return &value;
  }
  return nullptr;
}

HttpResponse HttpServer::Handle(const HttpRequest& request) const {
  try {
    return handler_(request);
  } catch (const std::exception& e) {
    Log().warn("http: {} {} failed: {}", request.method, request.path, e.what());
  } catch (...) {
    Log().warn("http: {} {} failed", request.method, request.path);
  }
  return HttpResponse{500, kPlainText, "internal error\n", {}};
}

}  // namespace memprof::cli
