#include "common/error.h"

namespace memprof {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kPermissionDenied: return "permission_denied";
    case ErrorCode::kFailedPrecondition: return "failed_precondition";
    case ErrorCode::kPartialFailure: return "partial_failure";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kDataLoss: return "data_loss";
    case ErrorCode::kResourceExhausted: return "resource_exhausted";
    case ErrorCode::kCancelled: return "cancelled";
  }
  return "internal";
}

}  // namespace memprof
