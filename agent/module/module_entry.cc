// Part of libmemprof_agent_server.so only: the C table of module_abi.h over
// AgentServer. No exception crosses it; every failure is a return value.
#include <cstdio>
#include <exception>
#include <string>

#include "agent/logging/agent_logger.h"
#include "agent/module/agent_server.h"
#include "agent/sampler/sampler.h"
#include "agent/service/grpc_fork_repair.h"
#include "agent/shared/agent_config.h"
#include "agent/shared/module_abi.h"

namespace memprof::agent {
namespace {

void CopyError(const std::string& message, char* out, size_t size) {
  if (out != nullptr && size > 0) std::snprintf(out, size, "%s", message.c_str());
}

void* Create(memprof_getenv_fn getenv, pid_t pid, int64_t started_unix_ms, char* error,
             size_t error_size) noexcept {
  try {
    AgentConfig config = ConfigFromEnvironment(getenv);
    auto server = AgentServer::Create(config, pid, started_unix_ms);
    if (!server) {
      CopyError(server.error().message, error, error_size);
      return nullptr;
    }
    return server->release();
  } catch (const std::exception& e) {
    CopyError(std::string("agent server: ") + e.what(), error, error_size);
  } catch (...) {
    CopyError("agent server: unknown error", error, error_size);
  }
  return nullptr;
}

AgentServer& Of(void* server) { return *static_cast<AgentServer*>(server); }

int Adopt(void* server, int fd, pid_t peer_pid, uid_t peer_uid, uid_t owner_uid) noexcept {
  Fd connection(fd);
  try {
    auto r = Of(server).Adopt(std::move(connection), peer_pid, peer_uid, owner_uid);
    if (r) return 0;
    Logger().error("{}", r.error().message);
  } catch (const std::exception& e) {
    Logger().error("could not serve a connection: {}", e.what());
  } catch (...) {
    Logger().error("could not serve a connection");
  }
  return -1;
}

int64_t Tick(void* server) noexcept {
  try {
    auto next = Of(server).Tick();
    return next ? next->count() : -1;
  } catch (...) {
    return 1000;  // try again in a second
  }
}

int Live(void* server) noexcept { return Of(server).Live() ? 1 : 0; }

void StopGrpc(void* server) noexcept {
  try {
    Of(server).StopGrpc();
  } catch (...) {
    Logger().error("stopping gRPC before fork() failed");
  }
}

void Destroy(void* server) noexcept {
  try {
    delete &Of(server);
  } catch (...) {
    Logger().error("agent server stop failed");
  }
}

int GrpcCanStart() noexcept { return InheritedGrpcDescriptorsIntact() ? 1 : 0; }

int64_t WindowEnd(void* server) noexcept { return Of(server).WindowEndUnixMs(); }

void InheritWindow(void* server, int64_t end_unix_ms) noexcept {
  try {
    Of(server).InheritWindow(end_unix_ms);
  } catch (...) {
    Logger().error("could not take over the parent's profiling window");
  }
}

void StopSampling() noexcept { Sampler::Deactivate(); }

void SamplerFork(int phase) noexcept {
  switch (phase) {
    case MEMPROF_FORK_PREPARE:
      Sampler::PrepareFork();
      break;
    case MEMPROF_FORK_PARENT:
      Sampler::AfterForkInParent();
      break;
    case MEMPROF_FORK_CHILD:
      Sampler::AfterForkInChild();
      break;
    default:
      break;
  }
}

constexpr memprof_server_ops kOps = {MEMPROF_SERVER_ABI_VERSION,
                                     &Create,
                                     &Adopt,
                                     &Tick,
                                     &Live,
                                     &StopGrpc,
                                     &Destroy,
                                     &GrpcCanStart,
                                     &WindowEnd,
                                     &InheritWindow,
                                     &StopSampling,
                                     &SamplerFork};

}  // namespace
}  // namespace memprof::agent

extern "C" __attribute__((visibility("default"))) const memprof_server_ops* memprof_server_entry() {
  return &memprof::agent::kOps;
}
