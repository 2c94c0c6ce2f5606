#ifndef MEMPROF_AGENT_SERVICE_ON_DEMAND_SERVER_H_
#define MEMPROF_AGENT_SERVICE_ON_DEMAND_SERVER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/service/call_tracker.h"
#include "common/fd.h"
#include "common/result.h"

namespace grpc {
class Server;
class ServerBuilder;
class Service;
}  // namespace grpc

namespace memprof::agent {

// The gRPC server, alive only while the agent is in use.
//
// gRPC keeps several threads of its own that wake up a few times a second.
// To keep an idle agent at zero wake-ups, the server is built when the first
// connection arrives and shut down (taking those threads with it) once no
// call has been in flight for `idle_timeout`. Connections idle past that are
// closed; a client simply connects again.
//
// Not thread-safe: Adopt() and Tick() run on the accept thread, Shutdown()
// after it has stopped.
class OnDemandServer {
 public:
  // Every request of memprof.v1 is a few bytes; 64 KiB leaves room for new
  // fields, and anything bigger is refused.
  static constexpr int kMaxRequestBytes = 64 * 1024;
  // The limit above is checked only once a message is complete: until then
  // gRPC's HTTP/2 transport buffers whatever a client sends, opening its flow
  // control window to the size the message announces (grpc/grpc#43012). What
  // bounds that memory is gRPC's memory quota: past it, gRPC reclaims memory
  // by closing connections. Without it, four local clients sending 64 MiB
  // requests made a target grow by 240 MiB (docs/contract.md rule 2); with it, by
  // less than 8 MiB. Responses are not charged against the quota, so dumps
  // and the multi-MiB statistics stream as before.
  static constexpr size_t kMemoryQuotaBytes = 4 * 1024 * 1024;
  // Responses can be large: the full jemalloc JSON statistics of a big
  // process run to several MiB.
  static constexpr int kMaxResponseBytes = 64 * 1024 * 1024;

  // `before_grpc_shutdown` runs once the server's calls are over, before
  // gRPC itself is shut down (a service's own gRPC alarms end there).
  OnDemandServer(grpc::Service& service, CallTracker& calls, std::chrono::milliseconds idle_timeout,
                 std::function<void()> before_grpc_shutdown = {});
  ~OnDemandServer();
  OnDemandServer(const OnDemandServer&) = delete;
  OnDemandServer& operator=(const OnDemandServer&) = delete;

  // Hands an accepted connection to gRPC, building the server first if needed.
  [[nodiscard]] Result<void> Adopt(Fd connection);
  // Shuts the server down if it has been idle long enough. Returns how long
  // the caller may wait before calling again; nullopt when no server is up
  // (wait for the next connection, however long).
  std::optional<std::chrono::milliseconds> Tick();
  // Stops serving; calls in flight get `grace` to finish, then are cancelled.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::milliseconds(500));
  bool serving() const { return server_ != nullptr; }

 private:
  grpc::Service& service_;
  CallTracker& calls_;
  const std::chrono::milliseconds idle_timeout_;
  std::function<void()> before_grpc_shutdown_;
  std::unique_ptr<grpc::Server> server_;
};

// The limits of OnDemandServer (request and response sizes, a memory quota
// named `quota_name`), for every server that serves memprof.v1: the Unix
// one above and the remote (TCP) one.
void ApplyServerLimits(grpc::ServerBuilder& builder, const std::string& quota_name);

// Once a server is gone, makes sure gRPC's global state is gone too, unless
// something else (another server, the host) still holds it, waiting up to
// `wait` for gRPC's own threads to drop their last references. See the .cc.
void FinishGrpcShutdown(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
// Holds gRPC initialised while a server is built. Without it, each of the
// builder's parts that takes and drops its own reference (the resource
// quota) would shut gRPC down again, joining the threads it had just
// started, before the server takes the reference that lasts.
class GrpcReference {
 public:
  GrpcReference();
  ~GrpcReference();
  GrpcReference(const GrpcReference&) = delete;
  GrpcReference& operator=(const GrpcReference&) = delete;
};

// Before any gRPC server starts in this process: in a forked child, replaces
// what gRPC kept open in the parent (grpc_fork_repair.h); fails when the
// host has closed it, and gRPC must then not start.
[[nodiscard]] Result<void> PrepareGrpcStart();

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_ON_DEMAND_SERVER_H_
