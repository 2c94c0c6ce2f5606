#ifndef MEMPROF_AGENT_ON_DEMAND_SERVER_H_
#define MEMPROF_AGENT_ON_DEMAND_SERVER_H_

#include <chrono>
#include <memory>
#include <optional>

#include "agent/call_tracker.h"
#include "common/fd.h"
#include "common/result.h"

namespace grpc {
class Server;
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
  OnDemandServer(grpc::Service& service, CallTracker& calls,
                 std::chrono::milliseconds idle_timeout);
  ~OnDemandServer();
  OnDemandServer(const OnDemandServer&) = delete;
  OnDemandServer& operator=(const OnDemandServer&) = delete;

  // Hands an accepted connection to gRPC, building the server first if needed.
  [[nodiscard]] Result<void> Adopt(Fd connection);
  // Shuts the server down if it has been idle long enough. Returns how long
  // the caller may wait before calling again; nullopt when no server is up
  // (wait for the next connection, however long).
  std::optional<std::chrono::milliseconds> Tick();
  void Shutdown();
  bool serving() const { return server_ != nullptr; }

  // In a forked child: forget the server without touching it.
  void AbandonAfterFork();

 private:
  grpc::Service& service_;
  CallTracker& calls_;
  const std::chrono::milliseconds idle_timeout_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ON_DEMAND_SERVER_H_
