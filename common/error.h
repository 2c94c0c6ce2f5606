#ifndef MEMPROF_COMMON_ERROR_H_
#define MEMPROF_COMMON_ERROR_H_

#include <string>
#include <utility>

namespace memprof {

// What kind of failure an Error is. Each maps to one memprofctl exit code
// (cli/io/exit_codes.h) and one gRPC status code (agent/service/status_mapping.h).
enum class ErrorCode {
  kInternal,            // anything else (exit 1)
  kInvalidArgument,     // usage error (exit 2)
  kNotFound,            // target not found / no agent (exit 3)
  kPermissionDenied,    // exit 4
  kFailedPrecondition,  // e.g. profiling not enabled, not jemalloc (exit 5)
  kPartialFailure,      // some targets of a multi-target run failed (exit 6)
  kUnavailable,         // agent not answering, stale socket (exit 3)
  kDataLoss,            // checksum or size mismatch (exit 1)
  kResourceExhausted,   // too much at once, e.g. concurrent dumps (exit 1)
  kCancelled,           // interrupted by the user
};

// A recoverable failure: a code plus a message written for the person who
// will read it ("what is wrong and what to do").
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;

  Error() = default;
  Error(ErrorCode c, std::string m) : code(c), message(std::move(m)) {}
};

// Short stable name of a code, e.g. "not_found", for logs and JSON output.
const char* ErrorCodeName(ErrorCode code);

}  // namespace memprof

#endif  // MEMPROF_COMMON_ERROR_H_
