#ifndef MEMPROF_TESTS_CLI_REPORT_PARSE_TEST_UTIL_H_
#define MEMPROF_TESTS_CLI_REPORT_PARSE_TEST_UTIL_H_

#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>

#include "cli/report/parse/heap_v2_parser.h"
#include "tests/support/files.h"

namespace memprof::report::parse::testing {

using test_support::ReadFile;

inline std::string DataPath(const std::string& name) {
  return std::string(MEMPROF_TEST_DATA_DIR) + "/analysis/" + name;
}

// One row of the malformed-input tables: what is fed, and the exact error.
struct MalformedCase {
  const char* name;
  std::string input;
  ErrorCode code;
  std::string message;
  ParseLimits limits = {};
};

// gtest names a failing case by this (ADL finds it here).
inline void PrintTo(const MalformedCase& c, std::ostream* out) { *out << c.name; }

inline ParseLimits Limits(size_t line_bytes, size_t frames, size_t records, size_t maps) {
  ParseLimits limits;
  limits.max_line_bytes = line_bytes;
  limits.max_frames = frames;
  limits.max_records = records;
  limits.max_mapped_lines = maps;
  return limits;
}

inline constexpr ErrorCode kBad = ErrorCode::kInvalidArgument;

inline Result<HeapDump> ParseText(const std::string& text, const ParseLimits& limits = {}) {
  std::istringstream in(text);
  return ParseHeapV2(in, "t.heap", limits);
}

}  // namespace memprof::report::parse::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_PARSE_TEST_UTIL_H_
