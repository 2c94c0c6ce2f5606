#ifndef MEMPROF_CLI_EXPORTER_PPROF_RESPONSE_H_
#define MEMPROF_CLI_EXPORTER_PPROF_RESPONSE_H_

#include <string>

#include "cli/exporter/http_server.h"
#include "common/error.h"

namespace memprof::cli {

// What the /debug/pprof/ endpoints answer when they do not answer with a
// profile or symbols: plain text saying what is wrong and what to do,
// marked with "X-Go-Pprof: 1" as Go's net/http/pprof marks its own. The
// pprof CLI prints the text of such an answer (not only its status) when it
// fails on it.
HttpResponse PprofText(unsigned status, std::string message);

// A failure, with PprofErrorStatus's code (429 with Retry-After: 1).
HttpResponse PprofError(const Error& error, bool target_exited = false);

// The HTTP status of a failed pprof request: kInvalidArgument 400,
// kNotFound 404, kPermissionDenied 403, kFailedPrecondition 412 (profiling
// not enabled at start-up, not jemalloc), kResourceExhausted 429 (the agent
// is busy), kUnavailable and kCancelled 503, anything else 500; and 502
// whatever the code when the target exited during the request
// (`target_exited`).
unsigned PprofErrorStatus(const Error& error, bool target_exited);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_PPROF_RESPONSE_H_
