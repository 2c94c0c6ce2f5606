#ifndef MEMPROF_CLI_REPORT_PARSE_ALLOCATION_PROFILE_PARSER_H_
#define MEMPROF_CLI_REPORT_PARSE_ALLOCATION_PROFILE_PARSER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "cli/report/model/allocation_profile.h"
#include "common/result.h"

namespace memprof::report::parse {

// The first line of every allocation profile, up to its version number.
inline constexpr std::string_view kAllocationProfileMagic = "memprof allocation profile v";
// The only version this parser reads.
inline constexpr int kAllocationProfileVersion = 1;

// Bounds that keep a hostile or corrupt input from costing unbounded memory;
// far above what jemalloc writes (its ring is bounded by record_bound, its
// stacks by 128 frames).
struct AllocationParseLimits {
  size_t max_header_line_bytes = 64 * 1024;
  size_t max_records = size_t{1} << 24;
  size_t max_frames = 1024;
  size_t max_mapped_lines = size_t{1} << 20;
  size_t max_gunzipped_bytes = size_t{4} << 30;  // as ParseLimits
};

// True when `text` starts like an allocation profile (its first line begins
// with kAllocationProfileMagic, whatever the version): what `report` uses to
// tell one from a heap dump.
bool LooksLikeAllocationProfile(std::string_view text);

// Whether the file at `path` (gzip'd or not) LooksLikeAllocationProfile;
// false when it cannot be read (the heap dump reader then says why).
bool IsAllocationProfileFile(const std::string& path);

// Parses an allocation profile (docs/protocol.md, "Allocation profiles").
// Strict: every problem is an Error (kInvalidArgument, `report` exits 2)
// "<source_name>:<line>: <what>", and a file cut short says where it ends:
// "<what>: truncated at byte N (line L)". Among them: another first line,
// "unsupported version N", a required header key missing or malformed, an
// input without the JSON line, invalid JSON (with where in the line, and
// the unescaped-thread-name hint), a record without a required field or
// with a bad "0x..." address, and no final "--- end" line. Never throws.
[[nodiscard]] Result<AllocationProfile> ParseAllocationProfileText(
    std::string_view text, std::string_view source_name, const AllocationParseLimits& limits = {});

// Maps `path` (inflating a gzip'd file first) and parses it; the path names
// the errors.
[[nodiscard]] Result<AllocationProfile> ParseAllocationProfileFile(
    const std::string& path, const AllocationParseLimits& limits = {});

}  // namespace memprof::report::parse

#endif  // MEMPROF_CLI_REPORT_PARSE_ALLOCATION_PROFILE_PARSER_H_
