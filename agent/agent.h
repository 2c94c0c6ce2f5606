#ifndef MEMPROF_AGENT_AGENT_H_
#define MEMPROF_AGENT_AGENT_H_

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "agent/agent_config.h"
#include "common/result.h"

namespace memprof::agent {

class Allocator;
class ConnectionAcceptor;
class DumpStreamer;
class MemoryProfileService;
class OnDemandServer;
class PeerRegistry;
class ProfilingController;
class RemoteServer;
class SocketRegistry;
struct ProcessIdentity;

// The agent inside the target process: one per process, reached through
// Instance(). Start is idempotent; Stop undoes it, and Start may follow again.
//
// Fork: a forked child never serves or removes its parent's socket. The
// child's copy is abandoned (its threads do not exist after fork) and the
// child runs without an agent unless it calls Start() itself (a pre-forking
// service that wants its workers profiled) or exec()s a program that preloads
// the agent, which then starts fresh for the new pid. Start() in a child is
// refused when gRPC was initialized in the parent at the moment of fork():
// gRPC's threads and locks do not survive fork, so using it there could hang
// the child. The parent's gRPC is up only while someone talks to its agent
// (and MEMPROF_IDLE_TIMEOUT after), so workers forked at start-up are fine.
//
// Remote listener (MEMPROF_LISTEN): started after the Unix socket, and only
// an extra. If it cannot start (bad or missing TLS material, port taken) the
// agent logs one warning saying why and serves its Unix socket alone. While it
// runs gRPC stays initialized, so a child forked meanwhile cannot start an
// agent of its own (see above); a forked child closes its inherited copy of
// the listening socket.
//
// Implementation warning: the instance is never destroyed (it is leaked on
// purpose) so no static destructor can race the threads it owns at exit;
// StopAtExit() does the orderly part from the library destructor.
class Agent {
 public:
  static Agent& Instance();

  [[nodiscard]] Result<void> Start(const AgentConfig& config);
  void Stop();
  // Called from the library destructor: stops only in the process that started.
  void StopAtExit();
  bool running() const;
  std::string socket_path() const;

 private:
  Agent() = default;
  ~Agent() = default;

  Result<void> StartLocked(const AgentConfig& config);
  // Starts the remote listener if configured; a failure is only logged.
  void StartRemoteLocked(const AgentConfig& config);
  void StopLocked();
  void OnForkPrepare();
  void OnForkParent();
  void OnForkChild();

  mutable std::mutex mu_;
  pid_t owner_pid_ = 0;  // 0 while stopped
  bool grpc_live_at_fork_ = false;  // set in the parent just before fork()
  bool grpc_unusable_ = false;      // in a child forked while gRPC was live
  bool remote_at_fork_ = false;     // the parent served MEMPROF_LISTEN at fork() (for the message)
  std::unique_ptr<ProcessIdentity> identity_;
  std::unique_ptr<PeerRegistry> peers_;
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<ProfilingController> profiling_;
  std::unique_ptr<DumpStreamer> dumps_;
  std::unique_ptr<MemoryProfileService> service_;
  std::unique_ptr<OnDemandServer> server_;
  std::unique_ptr<SocketRegistry> socket_;
  std::unique_ptr<ConnectionAcceptor> acceptor_;
  std::unique_ptr<MemoryProfileService> remote_service_;  // its own authorizer and call count
  std::unique_ptr<RemoteServer> remote_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_AGENT_H_
