#ifndef MEMPROF_CLI_COLLECT_CAPTURED_DUMP_H_
#define MEMPROF_CLI_COLLECT_CAPTURED_DUMP_H_

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `dump --captured --out-dir DIR`: fetches every peak capture the agent holds
// (`activate --capture-growth`), each into DIR under CaptureFileName (the
// capture's time, sequence and allocated bytes), with the guarantees of
// `dump --out-dir` (unnamed temp file, size and SHA-256 verified, linked in
// whole; existing files never replaced). Prints a line per file, or with
// `json` one object {"pid", "out_dir", "captures": [{sequence,
// created_unix_ms, allocated_bytes, path, size_bytes, sha256}]}.
//
// Errors: DIR as CheckOutputDirectory; kFailedPrecondition (exit 5) when the
// agent holds no capture (saying whether it is armed); a capture dropped for
// a newer one while the others were fetched is skipped with a note.
//
// `follow` (--follow): follows the agent's captures as it pushes them (the
// Watch stream; an agent older than it is asked every kFollowPollInterval)
// and writes each capture as soon as the agent holds it, the ones
// already held first, so that captures survive the process (an OOM kill
// ends it, and its captures with it). Ends normally when the process ends,
// when capturing is disarmed, or on SIGINT/SIGTERM; with --json, one
// document per line, each holding the capture just written. kUnavailable
// (exit 3) when it ended with nothing written; kFailedPrecondition (exit 5)
// when capturing is not armed and nothing is held.
[[nodiscard]] Result<void> RunCapturedDump(const TargetSelector& selector,
                                           const std::string& out_dir, bool json, bool follow,
                                           TargetDiscovery& discovery, ProfileClient& client,
                                           const Console& console, const std::stop_token& stop);

// What following one target's captures has written so far.
struct CaptureProgress {
  uint64_t last_sequence = 0;  // captures up to this one are written (or were dropped)
  uint64_t written = 0;
};

// Writes the captures `capture` lists as held and newer than
// progress.last_sequence into `out_dir` (as `dump --captured`, a line each,
// or with `json` a document per line). false when the process ended while
// one was fetched (with a note); an error for any other failure. Used by
// --follow and by the exporter's --captures-dir.
[[nodiscard]] Result<bool> SaveNewCaptures(const Target& target,
                                           const memprof::v1::CaptureState& capture,
                                           const std::string& out_dir, bool json,
                                           CaptureProgress& progress,
                                           const TargetDiscovery& discovery, ProfileClient& client,
                                           const Console& console, const std::stop_token& stop);

// How often --follow asks an agent older than Watch for new captures (the
// agent checks every 100 ms, so a capture is on disk within about 200 ms
// plus its transfer), and how often at most it starts a broken watch again.
inline constexpr std::chrono::milliseconds kFollowPollInterval(100);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_CAPTURED_DUMP_H_
