#include "tests/support/shell.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

namespace memprof::test_support {

ShellOutput RunShellCommand(const std::string& command) {
  ShellOutput output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.text.append(buffer, got);
  const int status = ::pclose(pipe);
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

std::string RunShell(const std::string& command) {
  ShellOutput output = RunShellCommand(command);
  EXPECT_EQ(output.exit_code, 0) << "failed: " << command << "\n" << output.text;
  return output.text;
}

std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace memprof::test_support
