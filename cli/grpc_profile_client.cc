#include "cli/grpc_profile_client.h"

#include <grpc/support/log.h>
#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <utility>

#include "cli/grpc_status_mapping.h"
#include "cli/logging.h"
#include "common/unix_socket.h"
#include "memprof/v1/memory_profile.grpc.pb.h"

namespace memprof::cli {
namespace {

using Stub = memprof::v1::MemoryProfile::Stub;

constexpr int kMaxMessageBytes = 64 * 1024 * 1024;

// gRPC's own log lines would break the one-line error contract; they only
// show with -vv, and our status mapping reports what went wrong.
void RouteGrpcLogs() {
  static std::once_flag once;
  std::call_once(once, [] {
    gpr_set_log_function([](gpr_log_func_args* args) {
      Log().debug("grpc: {} ({}:{})", args->message, args->file, args->line);
    });
  });
}

Error ConnectError(const Error& error, const Target& target) {
  switch (error.code) {
    case ErrorCode::kNotFound:
      return Error(ErrorCode::kNotFound, DescribeTarget(target) +
                                             " has no memprof agent (its socket " +
                                             target.socket_path + " disappeared)");
    case ErrorCode::kUnavailable:
      return Error(ErrorCode::kUnavailable, "stale socket " + target.socket_path +
                                                ": nobody is listening (the agent of " +
                                                DescribeTarget(target) +
                                                " stopped, or the pid now belongs to another "
                                                "process); restart the program with its agent");
    default:
      return error;
  }
}

grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return args;
}

// A remote agent: TCP with mutual TLS, never anything weaker.
Result<std::unique_ptr<Stub>> ConnectRemoteStub(const Target& target) {
  if (!target.tls) {
    return Fail(ErrorCode::kInvalidArgument,
                "remote target " + target.address +
                    " needs --tls-ca, --tls-cert and --tls-key (remote agents accept only "
                    "mutual TLS)");
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = target.tls->ca_pem;
  tls.pem_cert_chain = target.tls->cert_pem;
  tls.pem_private_key = target.tls->key_pem;
  auto channel =
      grpc::CreateCustomChannel(target.address, grpc::SslCredentials(tls), ChannelArgs());
  return memprof::v1::MemoryProfile::NewStub(channel);
}

Result<std::unique_ptr<Stub>> ConnectStub(const Target& target, std::chrono::milliseconds timeout) {
  if (target.remote()) return ConnectRemoteStub(target);
  auto fd = ConnectUnixSocket(target.socket_path, timeout);
  if (!fd) return Fail(ConnectError(fd.error(), target));
  auto peer = GetPeerCredentials(fd->get());
  if (!peer) return Fail(peer.error());
  if (peer->pid != target.pid) {
    return Fail(ErrorCode::kPermissionDenied,
                "socket " + target.socket_path + " is not served by pid " +
                    std::to_string(target.pid) + " (its peer is pid " + std::to_string(peer->pid) +
                    "); refusing to talk to it");
  }
  auto channel =
      grpc::CreateCustomInsecureChannelFromFd("memprof-agent", fd->Release(), ChannelArgs());
  return memprof::v1::MemoryProfile::NewStub(channel);
}

std::unexpected<Error> Interrupted() { return Fail(ErrorCode::kCancelled, "interrupted"); }

// Connects, runs one unary RPC with a deadline and maps its status.
template <typename Response, typename Invoke>
Result<Response> CallUnary(const Target& target, std::chrono::milliseconds timeout,
                           const std::stop_token& stop, Invoke invoke) {
  if (stop.stop_requested()) return Interrupted();
  auto stub = ConnectStub(target, timeout);
  if (!stub) return Fail(stub.error());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  std::stop_callback cancel(stop, [&context] { context.TryCancel(); });
  Response response;
  const grpc::Status status = invoke(**stub, &context, &response);
  if (stop.stop_requested()) return Interrupted();
  if (!status.ok()) return Fail(ErrorFromGrpcStatus(status, target));
  return response;
}

}  // namespace

GrpcProfileClient::GrpcProfileClient(std::chrono::milliseconds rpc_timeout, std::stop_token stop)
    : rpc_timeout_(rpc_timeout), stop_(std::move(stop)) {
  RouteGrpcLogs();
}

Result<memprof::v1::StatusResponse> GrpcProfileClient::Status(const Target& target) {
  return CallUnary<memprof::v1::StatusResponse>(
      target, rpc_timeout_, stop_, [](Stub& stub, grpc::ClientContext* ctx, auto* response) {
        return stub.Status(ctx, memprof::v1::StatusRequest(), response);
      });
}

Result<memprof::v1::ActivateResponse> GrpcProfileClient::Activate(
    const Target& target, const memprof::v1::ActivateRequest& request) {
  return CallUnary<memprof::v1::ActivateResponse>(
      target, rpc_timeout_, stop_, [&](Stub& stub, grpc::ClientContext* ctx, auto* response) {
        return stub.Activate(ctx, request, response);
      });
}

Result<memprof::v1::DeactivateResponse> GrpcProfileClient::Deactivate(const Target& target) {
  return CallUnary<memprof::v1::DeactivateResponse>(
      target, rpc_timeout_, stop_, [](Stub& stub, grpc::ClientContext* ctx, auto* response) {
        return stub.Deactivate(ctx, memprof::v1::DeactivateRequest(), response);
      });
}

Result<memprof::v1::StatsResponse> GrpcProfileClient::Stats(
    const Target& target, const memprof::v1::StatsRequest& request) {
  return CallUnary<memprof::v1::StatsResponse>(
      target, rpc_timeout_, stop_, [&](Stub& stub, grpc::ClientContext* ctx, auto* response) {
        return stub.Stats(ctx, request, response);
      });
}

Result<void> GrpcProfileClient::Dump(const Target& target, const memprof::v1::DumpRequest& request,
                                     const DumpChunkSink& sink) {
  if (stop_.stop_requested()) return Interrupted();
  auto stub = ConnectStub(target, rpc_timeout_);
  if (!stub) return Fail(stub.error());
  grpc::ClientContext context;
  std::stop_callback cancel(stop_, [&context] { context.TryCancel(); });
  auto reader = (*stub)->Dump(&context, request);
  memprof::v1::DumpChunk chunk;
  Result<void> sunk;
  while (reader->Read(&chunk)) {
    sunk = sink(chunk);
    if (!sunk) {
      context.TryCancel();
      while (reader->Read(&chunk)) {
      }
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!sunk) return sunk;
  if (stop_.stop_requested()) return Interrupted();
  if (!status.ok()) return Fail(ErrorFromGrpcStatus(status, target));
  return {};
}

}  // namespace memprof::cli
