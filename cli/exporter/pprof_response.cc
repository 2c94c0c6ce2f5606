#include "cli/exporter/pprof_response.h"

#include <utility>

namespace memprof::cli {

HttpResponse PprofText(unsigned status, std::string message) {
  return HttpResponse{status, kPlainText, std::move(message) + "\n", {{"X-Go-Pprof", "1"}}};
}

HttpResponse PprofError(const Error& error, bool target_exited) {
  HttpResponse r = PprofText(PprofErrorStatus(error, target_exited), error.message);
  if (r.status == 429) r.headers.emplace_back("Retry-After", "1");
  return r;
}

unsigned PprofErrorStatus(const Error& error, bool target_exited) {
  if (target_exited) return 502;
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kFailedPrecondition:
      return 412;
    case ErrorCode::kResourceExhausted:
      return 429;
    case ErrorCode::kUnavailable:
    case ErrorCode::kCancelled:
      return 503;
    default:
      return 500;
  }
}

}  // namespace memprof::cli
