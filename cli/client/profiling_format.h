#ifndef MEMPROF_CLI_CLIENT_PROFILING_FORMAT_H_
#define MEMPROF_CLI_CLIENT_PROFILING_FORMAT_H_

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// Wording and JSON shapes shared by list, status, activate and deactivate.

// "jemalloc", "tcmalloc", "glibc" or "other" (JSON and text).
std::string AllocatorName(memprof::v1::AllocatorKind kind);

// The allocator with its version (Status allocator_version), naming it
// once: "glibc 2.36" (the agent reports "glibc 2.36"), "jemalloc 5.3.0-0-g…",
// "tcmalloc (gperftools 2.10)" when the version names something else.
std::string AllocatorText(memprof::v1::AllocatorKind kind, const std::string& version);

// Whether the agent can take heap profiles of a process with this allocator
// at all (jemalloc and tcmalloc).
bool Profilable(memprof::v1::AllocatorKind kind);

// The PROFILING column of `list`: "active", "inactive", "off" (opt.prof=false;
// tcmalloc: not sampling), "unsupported" (config.prof=false;
// libtcmalloc_minimal) or "n/a" (neither jemalloc nor tcmalloc).
std::string ProfilingState(const memprof::v1::StatusResponse& status);

// What to do when profiling is impossible in this process, or nullopt when
// it is possible (e.g. "heap profiling was not enabled when the process
// started; restart it with MALLOC_CONF=...").
std::optional<std::string> ProfilingHint(const memprof::v1::StatusResponse& status);

// "until 2026-11-22 12:34:56 (in 5m)" for a window end, "until deactivated" for 0.
std::string DescribeWindowEnd(int64_t window_end_unix_ms,
                              std::chrono::system_clock::time_point now);

// {"active": bool, "window_end_unix_ms": number}
nlohmann::json ProfilingStateToJson(const memprof::v1::ProfilingState& state);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_PROFILING_FORMAT_H_
