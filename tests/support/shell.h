#ifndef MEMPROF_TESTS_SUPPORT_SHELL_H_
#define MEMPROF_TESTS_SUPPORT_SHELL_H_

#include <string>

namespace memprof::test_support {

// What a shell command printed on stdout, and how it ended.
struct ShellOutput {
  std::string text;
  int exit_code = -1;  // -1 when it was killed by a signal or could not start
  bool ok() const { return exit_code == 0; }
};

// Runs `command` with /bin/sh (popen); records no test failure.
ShellOutput RunShellCommand(const std::string& command);

// Runs `command` with /bin/sh; its stdout. A command that cannot start or
// does not exit 0 is a (non-fatal) test failure naming it and its output.
std::string RunShell(const std::string& command);

// Single-quotes `text` for the shell.
std::string Quote(const std::string& text);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_SHELL_H_
