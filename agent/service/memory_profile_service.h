#ifndef MEMPROF_AGENT_SERVICE_MEMORY_PROFILE_SERVICE_H_
#define MEMPROF_AGENT_SERVICE_MEMORY_PROFILE_SERVICE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "agent/allocators/allocator.h"
#include "agent/heap/capture_watcher.h"
#include "agent/heap/dump_streamer.h"
#include "agent/heap/heap_engine.h"
#include "agent/heap/process_identity.h"
#include "agent/heap/profiling_controller.h"
#include "agent/service/call_tracker.h"
#include "agent/service/dump_linger.h"
#include "memprof/v1/memory_profile.grpc.pb.h"

namespace memprof::agent {

// The gRPC adapter: each method translates the request into one domain call
// and the result back into the response. No exception leaves a method; any
// that escapes a domain call becomes an INTERNAL status.
//
// What the service knows about the other end of a call: what an Authorizer
// decides on.
struct CallPeer {
  // ServerContext::peer(): "fd:7" for a connection the agent adopted from its
  // Unix socket, "ipv4:10.0.0.2:51234" or "ipv6:[::1]:51234" over TCP.
  std::string address;
  // The connection's transport security: "ssl" on the remote (mutual TLS)
  // server, "insecure" (or empty) on the Unix socket.
  std::string transport_security;
  // Whether the client presented a certificate that gRPC verified (a TLS
  // server built to require and verify one lets no other call through).
  bool client_certificate = false;
  // That certificate's subject ("CN=ops-laptop,O=example"), for the logs.
  std::string certificate_subject;
};

// Reads the CallPeer of a call from its context.
CallPeer CallPeerOf(const grpc::CallbackServerContext& context);

// Every call first asks the Authorizer about its peer; a refusal is answered
// PERMISSION_DENIED with that message and nothing else happens. Without an
// authorizer every peer is served (in-process tests).
class MemoryProfileService final : public memprof::v1::MemoryProfile::CallbackService {
 public:
  // nullopt: serve the peer; a message: refuse it.
  using Authorizer = std::function<std::optional<std::string>(const CallPeer& peer)>;

  // Serves `engine`, which outlives the service.
  explicit MemoryProfileService(HeapEngine& engine, Authorizer authorizer = {})
      : identity_(engine.identity()),
        allocator_(engine.allocator()),
        profiling_(engine.profiling()),
        dumps_(engine.dumps()),
        captures_(engine.captures()),
        allocations_(engine.allocations()),
        changes_(engine.changes()),
        authorizer_(std::move(authorizer)) {}

  // Every call is counted from its start until it has finished.
  CallTracker& calls() { return calls_; }

  // How long a dump a local client copied out of the agent's file is kept
  // after its stream (DumpLinger).
  static constexpr std::chrono::milliseconds kLocalCopyGrace{200};
  // Frees the dumps kept so: the server calls it once its calls are over,
  // before it shuts gRPC down.
  void ReleaseLingeringDumps() { linger_.ReleaseAll(); }

  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* context,
                                   const v1::StatusRequest* request,
                                   v1::StatusResponse* response) override;
  grpc::ServerUnaryReactor* Activate(grpc::CallbackServerContext* context,
                                     const v1::ActivateRequest* request,
                                     v1::ActivateResponse* response) override;
  grpc::ServerUnaryReactor* Deactivate(grpc::CallbackServerContext* context,
                                       const v1::DeactivateRequest* request,
                                       v1::DeactivateResponse* response) override;
  grpc::ServerWriteReactor<v1::DumpChunk>* Dump(grpc::CallbackServerContext* context,
                                                const v1::DumpRequest* request) override;
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const v1::StatsRequest* request,
                                  v1::StatsResponse* response) override;
  grpc::ServerUnaryReactor* Purge(grpc::CallbackServerContext* context,
                                  const v1::PurgeRequest* request,
                                  v1::PurgeResponse* response) override;
  grpc::ServerUnaryReactor* OpenAllocationWindow(grpc::CallbackServerContext* context,
                                                 const v1::AllocationWindowRequest* request,
                                                 v1::AllocationWindowResponse* response) override;
  grpc::ServerWriteReactor<v1::WatchEvent>* Watch(grpc::CallbackServerContext* context,
                                                  const v1::WatchRequest* request) override;

 private:
  std::optional<grpc::Status> Refusal(const grpc::CallbackServerContext& context) const;
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                   const std::function<Result<void>()>& body);
  Result<void> FillStatus(v1::StatusResponse& response) const;
  Result<void> DoActivate(const v1::ActivateRequest& request, v1::ActivateResponse& response);
  Result<void> ApplyCapture(const v1::ActivateRequest& request);
  grpc::ServerWriteReactor<v1::DumpChunk>* StreamCapture(grpc::CallbackServerContext* context,
                                                         const v1::DumpRequest& request);
  grpc::ServerWriteReactor<v1::DumpChunk>* StreamAllocations(grpc::CallbackServerContext* context,
                                                             const v1::DumpRequest& request);
  Result<void> DoOpenAllocationWindow(const v1::AllocationWindowRequest& request,
                                      v1::AllocationWindowResponse& response);
  Result<void> DoDeactivate(const v1::DeactivateRequest& request, v1::DeactivateResponse& response);
  Result<void> FillStats(const v1::StatsRequest& request, v1::StatsResponse& response) const;
  Result<void> DoPurge(v1::PurgeResponse& response) const;

  const ProcessIdentity& identity_;
  const Allocator& allocator_;
  ProfilingController& profiling_;
  DumpStreamer& dumps_;
  CaptureWatcher& captures_;
  AllocationRecorder& allocations_;
  StateChanges& changes_;
  Authorizer authorizer_;
  CallTracker calls_;
  DumpLinger linger_{calls_, kLocalCopyGrace};  // after calls_: its alarms count as calls
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SERVICE_MEMORY_PROFILE_SERVICE_H_
