#include "agent/agent.h"

#include <grpc/grpc.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "agent/agent_logger.h"
#include "agent/allocator.h"
#include "agent/connection_acceptor.h"
#include "agent/dump_streamer.h"
#include "agent/memory_profile_service.h"
#include "agent/on_demand_server.h"
#include "agent/peer_registry.h"
#include "agent/process_identity.h"
#include "agent/profiling_controller.h"
#include "agent/remote_server.h"
#include "agent/socket_registry.h"
#include "agent/tls_material.h"

namespace memprof::agent {
namespace {

constexpr int kMaxConcurrentDumps = 2;

// Why a child forked while its parent's gRPC was up gets no agent, and what
// to do instead.
std::string ForkedChildRefusal(bool parent_served_remote) {
  return std::string(
             "not starting the agent in this forked child: gRPC was in use in its parent at "
             "fork() time and cannot be used after fork; ") +
         (parent_served_remote ? "the parent's agent serves MEMPROF_LISTEN, which keeps gRPC "
                                 "running: exec() the workers, or start the parent without "
                                 "MEMPROF_LISTEN"
                               : "fork workers before profiling, or exec() them");
}

}  // namespace

Agent& Agent::Instance() {
  static Agent* agent = [] {
    auto* a = new Agent();
    pthread_atfork([] { Instance().OnForkPrepare(); }, [] { Instance().OnForkParent(); },
                   [] { Instance().OnForkChild(); });
    return a;
  }();
  return *agent;
}

Result<void> Agent::Start(const AgentConfig& config) {
  std::lock_guard lock(mu_);
  if (owner_pid_ == ::getpid()) return {};  // already running
  auto r = StartLocked(config);
  if (!r) StopLocked();
  return r;
}

Result<void> Agent::StartLocked(const AgentConfig& config) {
  SetLogLevel(config.log_level);
  if (grpc_unusable_) {
    return Fail(ErrorCode::kFailedPrecondition, ForkedChildRefusal(remote_at_fork_));
  }
  for (const auto& warning : config.warnings) Logger().warn("{}", warning);
  identity_ = std::make_unique<ProcessIdentity>(CurrentProcessIdentity(config.malloc_conf));
  allocator_ = DetectAllocator();
  profiling_ = std::make_unique<ProfilingController>(*allocator_);
  dumps_ = std::make_unique<DumpStreamer>(*allocator_, kMaxConcurrentDumps);
  peers_ = std::make_unique<PeerRegistry>(::geteuid());
  PeerRegistry* peers = peers_.get();
  service_ = std::make_unique<MemoryProfileService>(
      *identity_, *allocator_, *profiling_, *dumps_,
      [peers](const CallPeer& peer) { return peers->Refusal(peer.address); });
  server_ = std::make_unique<OnDemandServer>(*service_, service_->calls(), config.idle_timeout);
  auto socket = SocketRegistry::Listen(config.socket_dir, identity_->pid);
  if (!socket) return Fail(socket.error());
  socket_ = std::move(*socket);
  OnDemandServer* server = server_.get();
  acceptor_ = std::make_unique<ConnectionAcceptor>(
      socket_->listen_fd(),
      [server, peers](Fd fd, const PeerCredentials& peer) {
        peers->Record(fd.get(), peer);
        if (auto r = server->Adopt(std::move(fd)); !r) Logger().error("{}", r.error().message);
      },
      [server] { return server->Tick(); });
  if (auto r = acceptor_->Start(); !r) return r;
  owner_pid_ = identity_->pid;
  Logger().info("agent {} listening on {} (allocator: {})", identity_->pid, socket_->path(),
                AllocatorKindName(allocator_->Info().kind));
  StartRemoteLocked(config);
  return {};
}

void Agent::StartRemoteLocked(const AgentConfig& config) {
  if (!config.remote) return;
  auto tls = LoadTlsMaterial(*config.remote);
  if (!tls) {
    Logger().warn("{}{}", kNotListeningOnTcp, tls.error().message);
    return;
  }
  for (const auto& warning : tls->warnings) Logger().warn("{}", warning);
  remote_service_ = std::make_unique<MemoryProfileService>(*identity_, *allocator_, *profiling_,
                                                           *dumps_, RemoteAuthorizer());
  auto server = RemoteServer::Start(config.remote->address, *tls, *remote_service_);
  if (!server) {
    Logger().warn("{}{}", kNotListeningOnTcp, server.error().message);
    remote_service_.reset();
    return;
  }
  remote_ = std::move(*server);
  Logger().info("agent {} listening on {} (mutual TLS)", identity_->pid,
                remote_->address().ToString());
}

void Agent::Stop() {
  std::lock_guard lock(mu_);
  if (owner_pid_ != ::getpid()) return;
  StopLocked();
}

void Agent::StopAtExit() { Stop(); }

void Agent::StopLocked() {
  if (acceptor_) acceptor_->Stop();  // no new connections
  socket_.reset();                   // unlinks the socket path
  if (server_) server_->Shutdown();
  server_.reset();
  remote_.reset();  // shuts the remote listener down
  remote_service_.reset();
  acceptor_.reset();
  service_.reset();
  dumps_.reset();
  profiling_.reset();
  allocator_.reset();
  peers_.reset();
  identity_.reset();
  owner_pid_ = 0;
}

bool Agent::running() const {
  std::lock_guard lock(mu_);
  return owner_pid_ != 0 && owner_pid_ == ::getpid();
}

std::string Agent::socket_path() const {
  std::lock_guard lock(mu_);
  return socket_ ? socket_->path() : std::string();
}

// fork() must not happen while Start/Stop rearrange the state; hold the lock
// across it so the child sees a consistent (if inherited) state.
void Agent::OnForkPrepare() {
  mu_.lock();
  grpc_live_at_fork_ = grpc_is_initialized() != 0;
  remote_at_fork_ = remote_ != nullptr;
}
void Agent::OnForkParent() { mu_.unlock(); }

void Agent::OnForkChild() {
  // Only the forking thread exists in the child: every object that owns a
  // thread or gRPC state is abandoned, never destroyed (that would join
  // threads that do not exist). The parent's socket stays the parent's.
  if (socket_) socket_->AbandonAfterFork();
  if (acceptor_) acceptor_->AbandonAfterFork();
  if (profiling_) profiling_->AbandonAfterFork();
  if (server_) server_->AbandonAfterFork();
  if (remote_) remote_->AbandonAfterFork();
  for (void* leaked :
       {static_cast<void*>(server_.release()), static_cast<void*>(acceptor_.release()),
        static_cast<void*>(remote_.release()), static_cast<void*>(remote_service_.release()),
        static_cast<void*>(service_.release()), static_cast<void*>(dumps_.release()),
        static_cast<void*>(profiling_.release()), static_cast<void*>(allocator_.release()),
        static_cast<void*>(peers_.release()), static_cast<void*>(socket_.release()),
        static_cast<void*>(identity_.release())}) {
    (void)leaked;
  }
  owner_pid_ = 0;
  grpc_unusable_ = grpc_unusable_ || grpc_live_at_fork_;
  mu_.unlock();
}

}  // namespace memprof::agent
