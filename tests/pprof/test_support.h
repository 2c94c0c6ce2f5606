#ifndef MEMPROF_TESTS_PPROF_TEST_SUPPORT_H_
#define MEMPROF_TESTS_PPROF_TEST_SUPPORT_H_

#include <string>

#include "pprof_proto/profile.pb.h"

namespace memprof::pprof::testing {

// Inflates a gzip stream; "" plus a test failure if it is not one.
std::string Gunzip(const std::string& compressed);

// Gunzips and parses a written profile (failing the test if either fails).
perftools::profiles::Profile DecodeProfile(const std::string& gzipped);

// A fresh directory under the temp dir; removed by the caller.
std::string MakeTempDir();

// Runs a shell command; its stdout. Sets *exit_code when given, else a
// non-zero exit fails the test.
std::string RunShell(const std::string& command, int* exit_code = nullptr);

// Single-quotes `text` for the shell.
std::string Quote(const std::string& text);

}  // namespace memprof::pprof::testing

#endif  // MEMPROF_TESTS_PPROF_TEST_SUPPORT_H_
