#ifndef MEMPROF_CLI_CLIENT_CAPTURE_FORMAT_H_
#define MEMPROF_CLI_CLIENT_CAPTURE_FORMAT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// Wording and JSON of peak capture (`activate --capture-growth`), shared by
// activate, deactivate, status and `dump --captured`.

// {"armed", "growth_bytes", "keep", "high_water_bytes", "taken_total",
//  "held": [{"sequence", "created_unix_ms", "allocated_bytes", "size_bytes"}]}
nlohmann::json CaptureStateToJson(const memprof::v1::CaptureState& state);
nlohmann::json CaptureInfoToJson(const memprof::v1::CaptureInfo& info);

// The memory cgroup limit of `status`: {"cgroup_version", "cgroup", "source",
// "limit_bytes", "usage_bytes"}, and in words: "600.0 MiB used of 1.0 GiB
// (58%; cgroup v2 memory.max of /system.slice/redis.service)".
nlohmann::json MemoryLimitToJson(const memprof::v1::MemoryLimit& limit);
std::string DescribeMemoryLimit(const memprof::v1::MemoryLimit& limit);

// "armed: a heap profile each time allocated bytes grow 100.0 MiB past the
// high-water mark (now 12.0 MiB); keeps the last 4; 3 taken" or "not armed;
// 3 taken" (the `status` row).
std::string DescribeCaptureState(const memprof::v1::CaptureState& state);

// One line per capture held, oldest first:
// "#3  2026-11-26 10:02:03  allocated 312.0 MiB  profile 45.1 KiB".
std::vector<std::string> DescribeHeldCaptures(const memprof::v1::CaptureState& state);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_CAPTURE_FORMAT_H_
