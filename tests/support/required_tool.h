#ifndef MEMPROF_TESTS_SUPPORT_REQUIRED_TOOL_H_
#define MEMPROF_TESTS_SUPPORT_REQUIRED_TOOL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace memprof::test_support {

// An outside program that tests run (jeprof, promtool, Chromium...), and
// what it takes to get one that works. Every such program is required: a
// test that cannot run it fails, and says which Debian package to install,
// instead of failing later with an exit code nobody can read.
struct RequiredTool {
  std::string name;                     // as messages name it: "jeprof"
  std::vector<std::string> candidates;  // names looked up on PATH, or absolute paths; in order
  std::string package;                  // the Debian package(s) that install it
  std::string why;                      // for a helper: why the tool runs it
  std::string note;                     // added to the advice ("then re-run cmake")
  std::vector<std::string> probe_args;  // a run that must exit 0: {"--version"}
  std::string probe_expects;            // text that run must print ("" = anything)
  std::chrono::seconds probe_timeout{60};
  // Programs the tool runs itself, checked first: a missing one is the most
  // precise diagnosis (jeprof runs, but fails without /usr/bin/file).
  std::vector<RequiredTool> helpers;
};

// The outcome of a check: where the tool is, or what is wrong and what to do.
struct ToolCheck {
  std::string path;     // the program to run; "" when the check failed
  std::string problem;  // "" when the tool can run
  bool ok() const { return problem.empty(); }
};

// This process's PATH (a default one when it is unset).
std::string CurrentPath();

// The first candidate that is an executable file: an absolute one as is, a
// bare name in `search_path`'s directories. "" when there is none.
std::string FindProgram(const std::vector<std::string>& candidates, const std::string& search_path);

// Finds `tool` and its helpers and runs their probes, with `search_path` as
// PATH (for the lookups and for the probes' own children).
ToolCheck CheckTool(const RequiredTool& tool, const std::string& search_path = CurrentPath());

// For tests: `ASSERT_TRUE(CanRun(Jeprof(), &jeprof_path))`. On failure the
// message names what is missing and the package to install. Checked once
// per process for each tool.
::testing::AssertionResult CanRun(const RequiredTool& tool, std::string* path = nullptr);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_REQUIRED_TOOL_H_
