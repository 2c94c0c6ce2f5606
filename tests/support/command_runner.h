#ifndef MEMPROF_TESTS_SUPPORT_COMMAND_RUNNER_H_
#define MEMPROF_TESTS_SUPPORT_COMMAND_RUNNER_H_

#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace memprof::test_support {

// What a finished command did.
struct CommandResult {
  std::vector<std::string> argv;
  int exit_code = -1;   // the shell's $? (128 + signal when killed)
  std::string out;      // everything written to stdout
  std::string err;      // everything written to stderr
  long max_rss_kb = 0;  // peak RSS of this process alone
  std::chrono::milliseconds elapsed{0};
  bool timed_out = false;  // killed at the deadline (also reported as a test failure)
  bool spawn_failed = false;
};

// Runs argv (argv[0] a path) to completion with `env` added to the test's
// scrubbed environment (see Subprocess), stdin from /dev/null, capturing
// stdout and stderr. If it has not finished after `timeout` it is SIGKILLed
// with its process group (its own children included) and the result has
// timed_out set; a command that cannot start has spawn_failed set and the
// reason in `err`. Records no test failure: for callers that judge the
// outcome themselves (the tool checks of required_tool.h).
CommandResult RunCommandUnchecked(const std::vector<std::string>& argv,
                                  const std::map<std::string, std::string>& env,
                                  std::chrono::milliseconds timeout);

// RunCommandUnchecked(), and a non-fatal gtest failure when the command
// cannot start or is killed at the deadline: what tests use.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

// For gtest failure messages: the command line, exit code, stdout and stderr
// (long outputs truncated).
std::ostream& operator<<(std::ostream& os, const CommandResult& r);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_COMMAND_RUNNER_H_
