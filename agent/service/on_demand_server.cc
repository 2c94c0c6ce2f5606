#include "agent/service/on_demand_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/server_posix.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "agent/logging/agent_logger.h"
#include "agent/service/grpc_fork_repair.h"

namespace memprof::agent {
// The last reference to gRPC's global state may be dropped on one of gRPC's
// own threads, and then gRPC shuts down asynchronously, in the background.
// Take a reference and drop it with grpc_shutdown_blocking() so that, once the
// server is gone, gRPC is really gone too: its threads are joined, and a
// worker forked from now on may start an agent of its own (see Agent).
//
// A server shut down with a call in flight still holds references for a
// moment: the cancelled call and its connection are torn down on gRPC's
// threads after Shutdown() returns. Until they are, gRPC is not gone, and a
// child forked then would get no agent; so before fork() wait for them, up to
// `wait` (the host's fork() waits with us). If the host uses gRPC itself the
// count never reaches zero; the wait then ends at its bound, and only moves
// the count up and down.
void FinishGrpcShutdown(std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (grpc_is_initialized() != 0) {
    grpc_init();
    grpc_shutdown_blocking();
    if (grpc_is_initialized() == 0 || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (grpc_is_initialized() == 0) NoteEpollDescriptorsGrpcKeeps();
}

GrpcReference::GrpcReference() { grpc_init(); }

GrpcReference::~GrpcReference() { grpc_shutdown(); }

Result<void> PrepareGrpcStart() {
  if (!PrivatizeInheritedGrpcDescriptors()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "gRPC cannot start: the host closed descriptors that gRPC keeps open");
  }
  NoteEpollDescriptorsBeforeGrpc();
  return {};
}

void ApplyServerLimits(grpc::ServerBuilder& builder, const std::string& quota_name) {
  builder.SetMaxReceiveMessageSize(OnDemandServer::kMaxRequestBytes);
  builder.SetMaxSendMessageSize(OnDemandServer::kMaxResponseBytes);
  builder.SetResourceQuota(
      grpc::ResourceQuota(quota_name).Resize(OnDemandServer::kMemoryQuotaBytes));
}

OnDemandServer::OnDemandServer(grpc::Service& service, CallTracker& calls,
                               std::chrono::milliseconds idle_timeout,
                               std::function<void()> before_grpc_shutdown)
    : service_(service),
      calls_(calls),
      idle_timeout_(idle_timeout),
      before_grpc_shutdown_(std::move(before_grpc_shutdown)) {}

OnDemandServer::~OnDemandServer() { Shutdown(); }

Result<void> OnDemandServer::Adopt(Fd connection) {
  if (!server_) {
    if (auto r = PrepareGrpcStart(); !r) return r;
    GrpcReference held;
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    ApplyServerLimits(builder, "memprof-agent");
    // No listening port: connections arrive through Adopt().
    server_ = builder.BuildAndStart();
    if (!server_) return Fail(ErrorCode::kInternal, "could not start the gRPC server");
    Logger().debug("gRPC server started");
  }
  calls_.Touch();  // a fresh connection counts as activity
  grpc::AddInsecureChannelFromFd(server_.get(), connection.Release());
  return {};
}

std::optional<std::chrono::milliseconds> OnDemandServer::Tick() {
  if (!server_) return std::nullopt;
  auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(
      CallTracker::Clock::now() - calls_.last_activity());
  if (calls_.in_flight() > 0) return idle_timeout_;
  if (idle >= idle_timeout_) {
    Shutdown();
    return std::nullopt;
  }
  return std::max(idle_timeout_ - idle, std::chrono::milliseconds(1));
}

void OnDemandServer::Shutdown(std::chrono::milliseconds grace) {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_.reset();
  if (before_grpc_shutdown_) before_grpc_shutdown_();
  FinishGrpcShutdown();
  Logger().debug("gRPC server stopped (idle)");
}

}  // namespace memprof::agent
