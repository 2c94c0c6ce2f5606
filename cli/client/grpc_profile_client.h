#ifndef MEMPROF_CLI_CLIENT_GRPC_PROFILE_CLIENT_H_
#define MEMPROF_CLI_CLIENT_GRPC_PROFILE_CLIENT_H_

#include <chrono>
#include <optional>
#include <stop_token>

#include "cli/client/profile_client.h"

namespace memprof::cli {

// ProfileClient over gRPC on the agent's Unix socket. For every call it
// connects with memprof::ConnectUnixSocket, refuses the socket unless
// SO_PEERCRED says the peer is the target pid (so an impostor listening on a
// stale path never sees a request), and makes the call on that very fd: a
// unary call on this thread with http2_unary_call.h, a stream through a
// gRPC channel built on the fd. A remote agent (TLS) gets a gRPC channel for
// every call, and gRPC is started only when a channel is.
// Unary calls have a deadline of `rpc_timeout`. Dump must start (its first
// chunk must arrive) within `rpc_timeout` -- a busy agent queues dumps, and
// that wait counts -- but its transfer has no deadline (a large dump may take
// long). Every call is cancelled when `stop` is requested.
// A local agent may drop a connection it has just accepted without reading
// or writing a byte (when it finds that its host closed its descriptors, it
// re-creates its socket and drops the connection that woke it). Such a call
// is made again on a fresh connection, as RetryDelay() decides.
// This is the only CLI file that knows the generated gRPC stub.
class GrpcProfileClient final : public ProfileClient {
 public:
  GrpcProfileClient(std::chrono::milliseconds rpc_timeout, std::stop_token stop);

  Result<memprof::v1::StatusResponse> Status(const Target& target) override;
  Result<memprof::v1::ActivateResponse> Activate(
      const Target& target, const memprof::v1::ActivateRequest& request) override;
  Result<memprof::v1::DeactivateResponse> Deactivate(
      const Target& target, const memprof::v1::DeactivateRequest& request) override;
  Result<memprof::v1::StatsResponse> Stats(const Target& target,
                                           const memprof::v1::StatsRequest& request) override;
  Result<memprof::v1::PurgeResponse> Purge(const Target& target) override;
  Result<memprof::v1::AllocationWindowResponse> OpenAllocationWindow(
      const Target& target, const memprof::v1::AllocationWindowRequest& request) override;
  Result<void> Dump(const Target& target, const memprof::v1::DumpRequest& request,
                    const DumpChunkSink& sink) override;
  Result<bool> Watch(const Target& target, const WatchSink& sink,
                     const std::stop_token& stop) override;

 private:
  std::chrono::milliseconds rpc_timeout_;
  std::stop_token stop_;
};

// How one attempt at a call ended, as far as retrying is concerned.
enum class AttemptFailure {
  kDropped,     // the agent closed our fresh connection before answering
  kSocketGone,  // connect() found no socket, or nobody listening on it
  kOther,       // anything else: an answer (even an error), a deadline, a wrong peer
};

struct RetryContext {
  bool unix_target = true;
  int attempt = 1;  // the attempt that just failed, counted from 1
  AttemptFailure failure = AttemptFailure::kOther;
  bool data_delivered = false;             // a Dump chunk already reached the sink
  std::chrono::milliseconds time_left{0};  // until the call's deadline
};

// At most this many attempts per call.
inline constexpr int kMaxCallAttempts = 3;

// How long to wait before trying a failed call again, or nullopt to give up
// with its error. Only Unix-socket targets are retried (a remote agent never
// drops connections this way), only when nothing has been delivered yet, and
// only a dropped connection -- or, after one, a socket that is briefly gone
// while the agent re-creates it. The waits (50 ms, then 100 ms) must fit
// before the deadline.
std::optional<std::chrono::milliseconds> RetryDelay(const RetryContext& context);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_GRPC_PROFILE_CLIENT_H_
