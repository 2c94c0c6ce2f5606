#ifndef MEMPROF_CLI_EXPORTER_HEAP_QUERY_H_
#define MEMPROF_CLI_EXPORTER_HEAP_QUERY_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string_view>

#include "cli/exporter/http_server.h"
#include "common/result.h"

namespace memprof::cli {

// Bounds of /debug/pprof/heap?seconds=S and /debug/pprof/allocs?seconds=S
// (the HTTP client waits that long).
inline constexpr std::chrono::seconds kMinHeapSeconds(1);
inline constexpr std::chrono::seconds kMaxHeapSeconds(300);
// /debug/pprof/allocs without seconds: the default of Go's CPU profile
// (/debug/pprof/profile), whose window it shares. Go's allocs without
// seconds is everything since start-up; there is no such record here, and
// a default lets `pprof http://HOST/debug/pprof/allocs?pid=N` work as is
// (pprof waits 60 s for a profile without seconds).
inline constexpr std::chrono::seconds kDefaultAllocsSeconds(30);

// What GET /debug/pprof/heap or /debug/pprof/allocs asks for.
struct HeapQuery {
  pid_t pid = 0;
  std::optional<std::chrono::seconds> seconds;  // profile this long first
};

// The pid=N argument: nullopt when there is none. kInvalidArgument when it
// is given twice or is not a positive process id, the message ending with
// `usage` (what a valid request looks like).
[[nodiscard]] Result<std::optional<pid_t>> ParsePidArgument(const HttpRequest& request,
                                                            std::string_view usage);

// pid=N (required, a positive number) and seconds=S (optional, a whole
// number from kMinHeapSeconds to kMaxHeapSeconds). Other arguments (Go's
// gc=1, debug=0) are ignored. kInvalidArgument, saying what is wrong and
// what a valid request looks like, for a missing, repeated or malformed one.
[[nodiscard]] Result<HeapQuery> ParseHeapQuery(const HttpRequest& request);

// The same for /debug/pprof/allocs, whose seconds is always set: an
// allocation window has a length (kDefaultAllocsSeconds without seconds=).
[[nodiscard]] Result<HeapQuery> ParseAllocsQuery(const HttpRequest& request);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_HEAP_QUERY_H_
