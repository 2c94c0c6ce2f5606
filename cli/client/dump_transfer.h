#ifndef MEMPROF_CLI_CLIENT_DUMP_TRANSFER_H_
#define MEMPROF_CLI_CLIENT_DUMP_TRANSFER_H_

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>

#include "cli/client/dump_receiver.h"
#include "cli/client/profile_client.h"
#include "cli/client/target.h"
#include "common/fd.h"
#include "common/result.h"

namespace memprof::cli {

// Streams one heap profile (or, with `allocation_window`, that window's
// allocation profile) from `target` into `write`, chunk by chunk, and
// verifies it (size, SHA-256; see DumpReceiver). kCancelled when `stop` was
// requested, even if the stream happened to finish.
[[nodiscard]] Result<DumpSummary> StreamDump(const Target& target, ProfileClient& client,
                                             const DumpReceiver::Writer& write,
                                             const std::stop_token& stop,
                                             uint64_t capture_sequence = 0,
                                             uint64_t allocation_window = 0);

// An unnamed file (O_TMPFILE) in $TMPDIR or /tmp, for a raw profile while it
// is analysed: nothing is left behind whatever happens to memprofctl. Read
// and write it through "/proc/self/fd/<fd>".
[[nodiscard]] Result<Fd> OpenScratchFile();

// The --json description of a written dump: pid, path, size_bytes, sha256,
// sample_interval_bytes, created_unix_ms.
nlohmann::json DumpSummaryToJson(const DumpSummary& summary, pid_t pid, const std::string& path);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_DUMP_TRANSFER_H_
