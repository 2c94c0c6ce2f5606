#ifndef MEMPROF_CLI_IO_EXIT_CODES_H_
#define MEMPROF_CLI_IO_EXIT_CODES_H_

#include <string>

#include "common/error.h"

namespace memprof::cli {

// memprofctl's exit codes (docs/contract.md section 2). Scripts rely on them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;       // anything else: I/O error, checksum mismatch
inline constexpr int kExitUsage = 2;         // bad flag, bad duration, ambiguous target
inline constexpr int kExitNoTarget = 3;      // no such process, no agent, stale socket
inline constexpr int kExitPermission = 4;    // permission denied
inline constexpr int kExitPrecondition = 5;  // not jemalloc, profiling not enabled
inline constexpr int kExitPartial = 6;       // some targets of a multi-target run failed

// The one place where an error kind becomes an exit code.
int ExitCodeFor(ErrorCode code);

// The exit-code table shown by `memprofctl --help`.
std::string ExitCodeHelp();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_EXIT_CODES_H_
