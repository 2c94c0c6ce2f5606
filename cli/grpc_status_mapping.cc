#include "cli/grpc_status_mapping.h"

#include <string>

namespace memprof::cli {
namespace {

std::string AgentMessage(const grpc::Status& status, const Target& target) {
  if (!status.error_message().empty()) return status.error_message();
  return "the memprof agent of " + DescribeTarget(target) + " failed (gRPC status " +
         std::to_string(static_cast<int>(status.error_code())) + ")";
}

bool LooksLikeTlsFailure(const std::string& message) {
  for (const char* mark : {"handshake", "Handshake", "SSL", "certificate", "CERTIFICATE"}) {
    if (message.find(mark) != std::string::npos) return true;
  }
  return false;
}

// A remote agent that cannot be reached: the TLS handshake failed (wrong
// CA, a client certificate the agent does not accept), or nothing answers.
Error RemoteUnavailable(const grpc::Status& status, const Target& target) {
  if (LooksLikeTlsFailure(status.error_message())) {
    return Error(ErrorCode::kPermissionDenied,
                 "TLS handshake with " + target.address +
                     " failed: either its certificate is not signed by --tls-ca, or it refused "
                     "our client certificate (--tls-cert, --tls-key) (" +
                     status.error_message() + ")");
  }
  return Error(ErrorCode::kUnavailable,
               "cannot reach a memprof agent at " + target.address +
                   " (is MEMPROF_LISTEN set in the target, and the port open?) (" +
                   status.error_message() + ")");
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
    case grpc::StatusCode::CANCELLED:
      return Error(ErrorCode::kCancelled, "request to " + DescribeTarget(target) + " cancelled");
    default:
      return Error(ErrorCode::kInternal, AgentMessage(status, target));
  }
}

}  // namespace memprof::cli
