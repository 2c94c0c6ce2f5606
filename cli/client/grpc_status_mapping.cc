#include "cli/client/grpc_status_mapping.h"

#include <initializer_list>
#include <string>

namespace memprof::cli {
namespace {

std::string AgentMessage(const grpc::Status& status, const Target& target) {
  if (!status.error_message().empty()) return status.error_message();
  return "the memprof agent of " + DescribeTarget(target) + " failed (gRPC status " +
         std::to_string(static_cast<int>(status.error_code())) + ")";
}

bool Mentions(const std::string& message, std::initializer_list<const char*> marks) {
  for (const char* mark : marks) {
    if (message.find(mark) != std::string::npos) return true;
  }
  return false;
}

// A remote agent that cannot be reached, told apart by what gRPC saw: we
// refused its certificate, it refused ours (it closes the connection in the
// handshake), or nothing answers at all.
Error RemoteUnavailable(const grpc::Status& status, const Target& target) {
  const std::string& why = status.error_message();
  const std::string handshake = "TLS handshake with " + target.address + " failed: ";
  if (Mentions(why, {"not in peer certificate"})) {
    return Error(ErrorCode::kPermissionDenied,
                 handshake + "the agent's certificate does not name the host we dialled (its "
                             "subjectAltName must list it) (" + why + ")");
  }
  if (Mentions(why, {"certificate verify failed", "CERTIFICATE_VERIFY_FAILED", "Handshake",
                     "handshake"})) {
    return Error(ErrorCode::kPermissionDenied,
                 handshake + "the agent's certificate is not signed by --tls-ca (" + why + ")");
  }
  if (Mentions(why, {"Socket closed"})) {
    return Error(ErrorCode::kPermissionDenied,
                 handshake + "the agent closed the connection, most likely because it does not "
                             "accept our client certificate (--tls-cert must be signed by the CA "
                             "in the agent's MEMPROF_TLS_CA) (" + why + ")");
  }
  return Error(ErrorCode::kUnavailable,
               "cannot reach a memprof agent at " + target.address +
                   " (is MEMPROF_LISTEN set in the target, and the port open?) (" + why + ")");
}

}  // namespace

Error ErrorFromGrpcStatus(const grpc::Status& status, const Target& target) {
  const std::string who = "the memprof agent of " + DescribeTarget(target);
  switch (status.error_code()) {
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Error(ErrorCode::kFailedPrecondition, AgentMessage(status, target));
    case grpc::StatusCode::PERMISSION_DENIED:
      return Error(ErrorCode::kPermissionDenied, AgentMessage(status, target));
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Error(ErrorCode::kInvalidArgument, AgentMessage(status, target));
    case grpc::StatusCode::NOT_FOUND:
      return Error(ErrorCode::kNotFound, AgentMessage(status, target));
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Error(ErrorCode::kResourceExhausted, AgentMessage(status, target));
    case grpc::StatusCode::UNAVAILABLE:
      if (target.remote()) return RemoteUnavailable(status, target);
      return Error(ErrorCode::kUnavailable, who + " is not answering on " + target.socket_path +
                                                " (" + status.error_message() + ")");
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Error(ErrorCode::kUnavailable,
                   who + " did not answer in time (raise the limit with --timeout)");
    case grpc::StatusCode::UNIMPLEMENTED:
      return Error(ErrorCode::kFailedPrecondition,
                   "the agent in " + DescribeTarget(target) +
                       " is older than this memprofctl and does not serve this request; restart "
                       "it with the current agent");
    case grpc::StatusCode::CANCELLED:
      return Error(ErrorCode::kCancelled, "request to " + DescribeTarget(target) + " cancelled");
    default:
      return Error(ErrorCode::kInternal, AgentMessage(status, target));
  }
}

}  // namespace memprof::cli
