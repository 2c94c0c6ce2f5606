#include "cli/io/exit_codes.h"

namespace memprof::cli {

int ExitCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return kExitUsage;
    case ErrorCode::kNotFound:
    case ErrorCode::kUnavailable:
      return kExitNoTarget;
    case ErrorCode::kPermissionDenied:
      return kExitPermission;
    case ErrorCode::kFailedPrecondition:
      return kExitPrecondition;
    case ErrorCode::kPartialFailure:
      return kExitPartial;
    case ErrorCode::kInternal:
    case ErrorCode::kDataLoss:
    case ErrorCode::kResourceExhausted:
    case ErrorCode::kCancelled:
      return kExitFailure;
  }
  return kExitFailure;
}

std::string ExitCodeHelp() {
  return "Exit codes:\n"
         "  0    success\n"
         "  1    any other failure (I/O error, checksum mismatch, ...)\n"
         "  2    usage error (bad flag or duration, ambiguous target)\n"
         "  3    target not found, no agent, stale socket, agent not answering\n"
         "  4    permission denied\n"
         "  5    precondition failed (not jemalloc, profiling not enabled at start-up)\n"
         "  6    partial failure in a multi-target run\n"
         "  130  interrupted (SIGINT; 143 for SIGTERM); `profile` still writes its profile\n"
         "       on the first interrupt (exit 0) and dies like this on the second;\n"
         "       dump --every, stats --watch and exporter stop cleanly and exit 0\n";
}

}  // namespace memprof::cli
