#ifndef MEMPROF_AGENT_MODULE_AGENT_SERVER_H_
#define MEMPROF_AGENT_MODULE_AGENT_SERVER_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "agent/shared/agent_config.h"
#include "common/fd.h"
#include "common/result.h"

namespace memprof::agent {

class HeapEngine;
class MemoryProfileService;
class OnDemandServer;
class PeerRegistry;
class RemoteServer;

// Everything behind the agent's socket: the heap engine (allocator,
// profiling, dumps, captures: heap/heap_engine.h) and the gRPC servers (the on-demand one for Unix connections, and the remote
// one for MEMPROF_LISTEN). Lives in libmemprof_agent_server.so; the core
// drives it through module_abi.h, from its accept thread.
//
// Not thread-safe: the core serializes every call (and holds its lock across
// fork()).
class AgentServer {
 public:
  [[nodiscard]] static Result<std::unique_ptr<AgentServer>> Create(const AgentConfig& config,
                                                                   pid_t pid,
                                                                   int64_t started_unix_ms);
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  // Serves an accepted Unix connection (starting gRPC if it is not running).
  [[nodiscard]] Result<void> Adopt(Fd connection, pid_t peer_pid, uid_t peer_uid, uid_t owner_uid);
  // Shuts gRPC down after the idle timeout. How long until it wants to be
  // called again.
  std::optional<std::chrono::milliseconds> Tick();
  // Whether gRPC runs (or has not finished shutting down) in this process.
  bool Live() const;
  // Stops gRPC now, cancelling calls in flight, and keeps everything else;
  // Adopt() starts it again, and the next Tick() restarts a remote listener.
  void StopGrpc();
  // The profiling window's end (Unix ms, 0 for none), and in a forked child
  // the parent's window to keep (ProfilingController::InheritWindow).
  int64_t WindowEndUnixMs() const;
  void InheritWindow(int64_t end_unix_ms);

 private:
  explicit AgentServer(const AgentConfig& config);
  void StartRemote();

  AgentConfig config_;
  std::unique_ptr<HeapEngine> engine_;  // outlives gRPC: windows and captures need no client
  std::unique_ptr<PeerRegistry> peers_;
  std::unique_ptr<MemoryProfileService> service_;
  std::unique_ptr<OnDemandServer> server_;
  std::unique_ptr<MemoryProfileService> remote_service_;  // its own authorizer and call count
  std::unique_ptr<RemoteServer> remote_;
  bool restart_remote_ = false;  // StopGrpc() stopped the remote listener
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_MODULE_AGENT_SERVER_H_
