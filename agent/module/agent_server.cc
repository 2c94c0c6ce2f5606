#include "agent/module/agent_server.h"

#include <grpc/grpc.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "agent/heap/heap_engine.h"
#include "agent/logging/agent_logger.h"
#include "agent/service/memory_profile_service.h"
#include "agent/service/on_demand_server.h"
#include "agent/service/peer_registry.h"
#include "agent/service/remote_server.h"
#include "agent/service/tls_material.h"

namespace memprof::agent {
namespace {

// Dumps streamed at once: each is one profile in a memfd, so this bounds the
// memory clients can make the agent hold.
constexpr int kMaxConcurrentDumps = 2;
// Dump requests that may wait for a slot (docs/protocol.md): a waiter costs
// only its call, never a dump.
constexpr int kMaxWaitingDumps = 64;
// How long a fork() waits for gRPC's threads to let go of a call that was
// in flight (a child forked before that gets no agent).
constexpr std::chrono::milliseconds kForkTeardownWait(2000);

}  // namespace

AgentServer::AgentServer(const AgentConfig& config) : config_(config) {}

Result<std::unique_ptr<AgentServer>> AgentServer::Create(const AgentConfig& config, pid_t pid,
                                                         int64_t started_unix_ms) {
  SetLogLevel(config.log_level);
  std::unique_ptr<AgentServer> s(new AgentServer(config));
  s->engine_ = std::make_unique<HeapEngine>(
      HeapEngineOptions{.malloc_conf = config.malloc_conf,
                        .pid = pid,
                        .started_unix_ms = started_unix_ms,
                        .started_by = config.started_by,
                        .dump_limits = DumpLimits{.max_active = kMaxConcurrentDumps,
                                                  .max_waiting = kMaxWaitingDumps,
                                                  .stall_timeout = config.dump_stall_timeout}});
  s->peers_ = std::make_unique<PeerRegistry>(::geteuid());
  PeerRegistry* peers = s->peers_.get();
  s->service_ = std::make_unique<MemoryProfileService>(
      *s->engine_, [peers](const CallPeer& peer) { return peers->Refusal(peer.address); });
  MemoryProfileService* service = s->service_.get();
  s->server_ = std::make_unique<OnDemandServer>(*service, service->calls(), config.idle_timeout,
                                                [service] { service->ReleaseLingeringDumps(); });
  if (config.remote) s->StartRemote();
  return s;
}

AgentServer::~AgentServer() {
  if (server_) server_->Shutdown();
  remote_.reset();
  FinishGrpcShutdown();
}

void AgentServer::StartRemote() {
  auto tls = LoadTlsMaterial(*config_.remote);
  if (!tls) {
    Logger().warn("{}{}", kNotListeningOnTcp, tls.error().message);
    return;
  }
  for (const auto& warning : tls->warnings) Logger().warn("{}", warning);
  if (!remote_service_) {
    remote_service_ = std::make_unique<MemoryProfileService>(*engine_, RemoteAuthorizer());
  }
  auto server = RemoteServer::Start(config_.remote->address, *tls, *remote_service_);
  if (!server) {
    Logger().warn("{}{}", kNotListeningOnTcp, server.error().message);
    return;
  }
  remote_ = std::move(*server);
  Logger().info("agent {} listening on {} (mutual TLS)", engine_->identity().pid,
                remote_->address().ToString());
}

Result<void> AgentServer::Adopt(Fd connection, pid_t peer_pid, uid_t peer_uid,
                                uid_t owner_uid) {
  peers_->SetOwner(owner_uid);
  peers_->Record(connection.get(), PeerCredentials{.pid = peer_pid, .uid = peer_uid, .gid = 0});
  return server_->Adopt(std::move(connection));
}

std::optional<std::chrono::milliseconds> AgentServer::Tick() {
  if (std::exchange(restart_remote_, false)) StartRemote();
  return server_->Tick();
}

void AgentServer::StopGrpc() {
  restart_remote_ = restart_remote_ || remote_ != nullptr;
  // The remote listener first: the on-demand server's shutdown then finds
  // gRPC's last user gone and waits for gRPC's threads to end.
  remote_.reset();
  server_->Shutdown(std::chrono::milliseconds(0));
  // A cancelled call is torn down on gRPC's threads after Shutdown().
  FinishGrpcShutdown(kForkTeardownWait);
}

int64_t AgentServer::WindowEndUnixMs() const { return engine_->profiling().WindowEndUnixMs(); }

void AgentServer::InheritWindow(int64_t end_unix_ms) {
  engine_->profiling().InheritWindow(end_unix_ms);
}

bool AgentServer::Live() const {
  return server_->serving() || remote_ != nullptr || grpc_is_initialized() != 0;
}

}  // namespace memprof::agent
