#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_COMMAND_RUNNER_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_COMMAND_RUNNER_H_

#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace memprof::integration {

// What a finished command did.
struct CommandResult {
  std::vector<std::string> argv;
  int exit_code = -1;     // the shell's $? (128 + signal when killed)
  std::string out;        // everything written to stdout
  std::string err;        // everything written to stderr
  long max_rss_kb = 0;    // peak RSS of this process alone
  std::chrono::milliseconds elapsed{0};
  bool timed_out = false;  // killed at the deadline (also reported as a test failure)
  bool spawn_failed = false;
};

// Runs argv to completion with `env` added to the test's scrubbed environment
// (see Subprocess), capturing stdout and stderr. If it has not finished after
// `timeout` it is SIGKILLed, the result has timed_out set, and a non-fatal
// gtest failure is recorded.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

// For gtest failure messages: the command line, exit code, stdout and stderr
// (long outputs truncated).
std::ostream& operator<<(std::ostream& os, const CommandResult& r);

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_COMMAND_RUNNER_H_
