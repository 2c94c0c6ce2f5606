#ifndef MEMPROF_CLI_CLIENT_HTTP2_UNARY_CALL_H_
#define MEMPROF_CLI_CLIENT_HTTP2_UNARY_CALL_H_

#include <grpcpp/support/status.h>

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

namespace memprof::cli {

// How one unary call over HTTP/2 ended.
struct UnaryCallOutcome {
  // What gRPC's own client would report: the agent's status, or the
  // transport's (UNAVAILABLE for a lost connection, DEADLINE_EXCEEDED,
  // CANCELLED when `stop` was requested).
  grpc::Status status;
  std::string response;  // the reply message, serialized, when status is OK
  // The agent closed the connection, or refused the call, before it sent a
  // byte of an answer to it: the call was never served, so it may be made
  // again on a fresh connection.
  bool unanswered = false;
};

// Makes one gRPC unary call on `socket`, a stream socket connected to a gRPC
// server that speaks HTTP/2 in the clear (the agent's Unix socket): `path` is
// "/<package>.<Service>/<Method>", `request` the serialized request message.
// It runs on the calling thread with the nghttp2 library, and starts no
// thread: a gRPC 1.51 channel starts seven for one call, which is most of
// what a one-shot `memprofctl stats` spends beyond redis-cli
// (docs/performance.md). The call ends at `deadline` (DEADLINE_EXCEEDED; the
// agent learns it from grpc-timeout) or when `stop` is requested
// (CANCELLED). Sets `socket` non-blocking, and leaves it to the caller to
// close.
UnaryCallOutcome CallUnaryOverHttp2(int socket, std::string_view path, std::string_view request,
                                    std::chrono::steady_clock::time_point deadline,
                                    const std::stop_token& stop);

// The value of a grpc-timeout header for `left`: at most 8 digits and a unit.
std::string GrpcTimeoutHeader(std::chrono::milliseconds left);

// A grpc-message header's value decoded: gRPC percent-encodes its bytes
// outside printable ASCII, and '%' itself.
std::string PercentDecoded(std::string_view text);

// The status of a reply whose HTTP status is not 200 and that carries no
// grpc-status (a proxy, or not a gRPC server), as gRPC maps it.
grpc::StatusCode StatusCodeOfHttpStatus(int http_status);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_HTTP2_UNARY_CALL_H_
