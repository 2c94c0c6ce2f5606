#ifndef MEMPROF_AGENT_CORE_AGENT_H_
#define MEMPROF_AGENT_CORE_AGENT_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "agent/core/env_snapshot.h"
#include "agent/core/fs_identity.h"
#include "agent/core/user_change.h"
#include "agent/shared/agent_config.h"
#include "agent/shared/module_abi.h"
#include "common/fd.h"
#include "common/result.h"
#include "common/unix_socket.h"

namespace memprof::agent {

class ConnectionAcceptor;

// The agent's core inside the target process: one per process, reached
// through Instance(). Start is idempotent; Stop undoes it, and Start may
// follow again.
//
// Idle, the core is one thread (ConnectionAcceptor) blocked in poll() and
// nothing else: no gRPC, no protobuf. The first connection loads the server
// part (module_loader.h) and hands the connection to it; the server starts
// gRPC and shuts it down again once idle (MEMPROF_IDLE_TIMEOUT), and stays
// loaded.
//
// Fork (MEMPROF_FORK): in the child nothing of the parent's is used, closed
// or removed except the child's own copies of the parent's descriptors; with
// `follow` (default) the child starts a fresh agent that publishes
// <childpid>.sock 200 ms later if the child still runs (one that exec()s or
// exits first leaves nothing behind). With `off` it gets none. gRPC's
// threads and locks do not survive fork(): with `follow`, a gRPC running in
// the parent (a client in the last MEMPROF_IDLE_TIMEOUT, or a remote
// listener) is stopped before fork() and started again afterwards, so that
// the child starts its own (calls in flight are cancelled).
//
// Implementation warning: the instance is never destroyed (it is leaked on
// purpose) so no static destructor can race the threads it owns at exit;
// StopAtExit() does the orderly part from the library destructor.
class Agent {
 public:
  static Agent& Instance();

  // Starts with the configuration read from `env`.
  [[nodiscard]] Result<void> Start(EnvSnapshot env);
  void Stop();
  // Called from the library destructor: stops only in the process that started.
  void StopAtExit();
  bool running() const;
  std::string socket_path() const;

  // On the host thread about to change the process's user ids from `now`
  // to `after` (user_change_hooks.cc): when the change takes the socket's
  // owner away for good, hands the socket over to the user the process
  // becomes (SocketRegistry::HandOver) and returns the identity it had, for
  // UndoUserChange() if the change fails.
  std::optional<FsIdentity> PrepareUserChange(const UserIds& now, const UserIds& after);
  void UndoUserChange(const FsIdentity& previous);

 private:
  Agent() = default;
  ~Agent() = default;

  static const char* ServerGetenv(const char* name);
  std::string ForkedChildRefusal() const;
  Result<void> StartLocked(std::chrono::milliseconds publish_delay);
  void StopLocked();
  void OnConnection(Fd connection, const PeerCredentials& peer);
  std::optional<std::chrono::milliseconds> OnTick();
  // Loads the server part and creates its state if not done yet. Needs server_mu_.
  Result<void> EnsureServerLocked();
  void OnForkPrepare();
  bool MarkForking();
  void StopGrpcOnAcceptThread();
  void OnForkParent();
  void OnForkChild();
  // In a forked child that starts an agent: the first task of its accept
  // thread, which keeps the parent's window end (or ends profiling when the
  // module cannot take it over).
  void InheritWindowOnAcceptThread(int64_t end_unix_ms);
  // For a forked child that no agent serves, forked during a timed window:
  // jemalloc's prof.active and memprof's own sampler stop (nobody could end
  // them later).
  void StopAllProfiling();

  mutable std::mutex mu_;  // start, stop and fork
  std::mutex server_mu_;   // every call into the server, and fork
  pid_t owner_pid_ = 0;    // 0 while stopped
  int64_t started_unix_ms_ = 0;
  EnvSnapshot env_;
  AgentConfig config_;
  std::unique_ptr<ConnectionAcceptor> acceptor_;
  const memprof_server_ops* ops_ = nullptr;  // the loaded server part
  void* server_ = nullptr;                   // its state for this process
  bool remote_at_fork_ = false;       // the parent served MEMPROF_LISTEN (for the message)
  bool server_live_at_fork_ = false;  // gRPC ran through fork() (MEMPROF_FORK=off)
  bool forking_ = false;  // gRPC stopped for fork(): no restart till after it (server_mu_)
  bool server_unusable_ = false;      // in a child forked while gRPC ran
  int64_t window_end_at_fork_ = 0;    // the parent's profiling window end (Unix ms), or 0
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_AGENT_H_
