#ifndef MEMPROF_TESTS_SUPPORT_CAPTURED_RUN_H_
#define MEMPROF_TESTS_SUPPORT_CAPTURED_RUN_H_

#include <chrono>
#include <string>
#include <vector>

namespace memprof::test_support {

// What a finished (or killed) command did.
struct CapturedRun {
  int exit_code = -1;  // 128 + signal when killed, as a shell says it
  bool timed_out = false;
  std::string output;  // stdout and stderr together
  std::string error;   // why it could not start ("" when it did)
};

// Runs argv (argv[0] an absolute path) to completion with this process's
// environment but `search_path` as PATH, stdin from /dev/null, and stdout
// and stderr captured. At `timeout` it is SIGKILLed with its whole process
// group (a tool's children included), and timed_out is set.
CapturedRun RunCaptured(const std::vector<std::string>& argv, const std::string& search_path,
                        std::chrono::seconds timeout);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_CAPTURED_RUN_H_
