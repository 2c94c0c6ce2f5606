#ifndef MEMPROF_TESTS_CLI_REPORT_RENDER_RENDER_UTIL_H_
#define MEMPROF_TESTS_CLI_REPORT_RENDER_RENDER_UTIL_H_

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/render/report_renderer.h"

namespace memprof::report::render::testing {

// What `renderer` writes for `aggregation`; a failed render fails the test.
inline std::string Render(const ReportRenderer& renderer,
                          const aggregate::Aggregation& aggregation) {
  std::ostringstream out;
  auto ok = renderer.Render(aggregation, out);
  EXPECT_TRUE(ok.has_value()) << ok.error().message;
  return out.str();
}

}  // namespace memprof::report::render::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_RENDER_RENDER_UTIL_H_
