#ifndef MEMPROF_CLI_GRPC_PROFILE_CLIENT_H_
#define MEMPROF_CLI_GRPC_PROFILE_CLIENT_H_

#include <chrono>
#include <stop_token>

#include "cli/profile_client.h"

namespace memprof::cli {

// ProfileClient over gRPC on the agent's Unix socket. For every call it
// connects with memprof::ConnectUnixSocket, refuses the socket unless
// SO_PEERCRED says the peer is the target pid (so an impostor listening on a
// stale path never sees a request), and builds the channel on that very fd.
// Unary calls have a deadline of `rpc_timeout`; Dump has none (a large dump
// may take long) but, like every call, is cancelled when `stop` is requested.
// This is the only CLI file that knows the generated gRPC stub.
class GrpcProfileClient final : public ProfileClient {
 public:
  GrpcProfileClient(std::chrono::milliseconds rpc_timeout, std::stop_token stop);

  Result<memprof::v1::StatusResponse> Status(const Target& target) override;
  Result<memprof::v1::ActivateResponse> Activate(
      const Target& target, const memprof::v1::ActivateRequest& request) override;
  Result<memprof::v1::DeactivateResponse> Deactivate(const Target& target) override;
  Result<memprof::v1::StatsResponse> Stats(const Target& target,
                                           const memprof::v1::StatsRequest& request) override;
  Result<void> Dump(const Target& target, const memprof::v1::DumpRequest& request,
                    const DumpChunkSink& sink) override;

 private:
  std::chrono::milliseconds rpc_timeout_;
  std::stop_token stop_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_GRPC_PROFILE_CLIENT_H_
