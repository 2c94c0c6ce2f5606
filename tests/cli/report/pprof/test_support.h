#ifndef MEMPROF_TESTS_CLI_REPORT_PPROF_TEST_SUPPORT_H_
#define MEMPROF_TESTS_CLI_REPORT_PPROF_TEST_SUPPORT_H_

#include <string>

#include "pprof_proto/profile.pb.h"

namespace memprof::report::pprof::testing {

// Inflates a gzip stream; "" plus a test failure if it is not one.
std::string Gunzip(const std::string& compressed);

// Gunzips and parses a written profile (failing the test if either fails).
perftools::profiles::Profile DecodeProfile(const std::string& gzipped);

}  // namespace memprof::report::pprof::testing

#endif  // MEMPROF_TESTS_CLI_REPORT_PPROF_TEST_SUPPORT_H_
