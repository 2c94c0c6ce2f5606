#ifndef MEMPROF_TESTS_CLI_REPORT_PARSE_TEST_UTIL_H_
#define MEMPROF_TESTS_CLI_REPORT_PARSE_TEST_UTIL_H_

#include <fcntl.h>

#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>

#include "cli/report/parse/heap_v2_parser.h"
#include "cli/report/parse/line_reader.h"
#include "common/fd.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

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

// `text` written to a file and read back through a FileLineReader by
// `parse` (ParseHeapV2Lines or ParseGperftoolsLines), the errors naming
// `source`.
template <typename Parse>
Result<HeapDump> ParseThroughFile(const std::string& text, std::string_view source,
                                  const ParseLimits& limits, Parse parse) {
  test_support::TempDir dir;
  const std::string path = dir.File("dump");
  test_support::WriteFile(path, text);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Fail(ErrorCode::kInternal, "cannot open " + path);
  FileLineReader reader(fd.get(), limits.max_line_bytes);
  return parse(reader, source, limits);
}

}  // namespace memprof::report::parse::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_PARSE_TEST_UTIL_H_
