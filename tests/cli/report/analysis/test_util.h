#ifndef MEMPROF_TESTS_CLI_REPORT_ANALYSIS_TEST_UTIL_H_
#define MEMPROF_TESTS_CLI_REPORT_ANALYSIS_TEST_UTIL_H_

#include <sstream>
#include <string>

#include "cli/report/analysis/heap_v2_parser.h"
#include "tests/support/files.h"

namespace memprof::analysis::testing {

using test_support::ReadFile;

inline std::string DataPath(const std::string& name) {
  return std::string(MEMPROF_TEST_DATA_DIR) + "/analysis/" + name;
}

inline Result<HeapDump> ParseText(const std::string& text, const ParseLimits& limits = {}) {
  std::istringstream in(text);
  return ParseHeapV2(in, "t.heap", limits);
}

}  // namespace memprof::analysis::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_ANALYSIS_TEST_UTIL_H_
