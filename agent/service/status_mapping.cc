#include "agent/service/status_mapping.h"

namespace memprof::agent {

grpc::Status ToGrpcStatus(const Error& error) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (error.code) {
    case ErrorCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case ErrorCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case ErrorCode::kPermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case ErrorCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case ErrorCode::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case ErrorCode::kDataLoss: code = grpc::StatusCode::DATA_LOSS; break;
    case ErrorCode::kCancelled: code = grpc::StatusCode::CANCELLED; break;
    case ErrorCode::kResourceExhausted: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
    case ErrorCode::kPartialFailure:
    case ErrorCode::kInternal: code = grpc::StatusCode::INTERNAL; break;
  }
  return grpc::Status(code, error.message);
}

}  // namespace memprof::agent
