#ifndef MEMPROF_CLI_REPORT_PARSE_RECENT_ALLOC_JSON_H_
#define MEMPROF_CLI_REPORT_PARSE_RECENT_ALLOC_JSON_H_

// The JSON line of an allocation profile: what jemalloc 5.3's
// experimental.prof_recent.alloc_dump writes. Internal to
// allocation_profile_parser.cc.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/report/model/allocation_profile.h"
#include "common/result.h"

namespace memprof::report::parse {

struct RecentAllocs {
  std::optional<uint64_t> sample_interval;  // the document's own copy
  std::vector<AllocationRecord> records;
};

// Parses one line of compact JSON, a record at a time (the document of a
// million records is never built). Errors carry only "what" (the caller
// adds "<file>:<line>: "), kInvalidArgument: invalid JSON with the byte of
// the line where it breaks, a record lacking a required field or with one
// of the wrong type, a bad address, more than `max_records` records or
// `max_frames` frames in a trace.
[[nodiscard]] Result<RecentAllocs> ParseRecentAllocJson(std::string_view line, size_t max_records,
                                                        size_t max_frames);

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_RECENT_ALLOC_JSON_H_
