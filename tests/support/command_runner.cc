#include "tests/support/command_runner.h"

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace memprof::test_support {
namespace {

std::string Truncated(const std::string& s) {
  constexpr size_t kMax = 4000;
  if (s.size() <= kMax) return s;
  return s.substr(0, kMax) + "\n... (" + std::to_string(s.size() - kMax) + " more bytes)";
}

}  // namespace

CommandResult RunCommandUnchecked(const std::vector<std::string>& argv,
                                  const std::map<std::string, std::string>& env,
                                  std::chrono::milliseconds timeout) {
  CommandResult result;
  result.argv = argv;
  auto start = std::chrono::steady_clock::now();
  auto proc = Subprocess::Spawn(SpawnOptions{argv, env, -1});
  if (!proc) {
    result.spawn_failed = true;
    result.err = proc.error().message;
    return result;
  }
  std::optional<ExitStatus> status = (*proc)->Wait(timeout);
  if (!status) {
    result.timed_out = true;
    status = (*proc)->KillAndReap();
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  (*proc)->Wait(std::chrono::seconds(1));  // lets the reader reach EOF after a kill
  result.exit_code = status->ShellCode();
  result.max_rss_kb = status->max_rss_kb;
  result.out = (*proc)->StdoutText();
  result.err = (*proc)->StderrText();
  return result;
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         std::chrono::milliseconds timeout) {
  CommandResult result = RunCommandUnchecked(argv, env, timeout);
  if (result.spawn_failed) {
    ADD_FAILURE() << "cannot start " << JoinArgv(argv) << ": " << result.err;
  } else if (result.timed_out) {
    ADD_FAILURE() << "command did not finish within " << timeout.count() << " ms and was killed\n"
                  << result;
  }
  return result;
}

std::ostream& operator<<(std::ostream& os, const CommandResult& r) {
  return os << "$ " << JoinArgv(r.argv) << "\nexit code: " << r.exit_code
            << (r.timed_out ? " (timed out)" : "") << "\n--- stdout ---\n"
            << Truncated(r.out) << "\n--- stderr ---\n"
            << Truncated(r.err) << "\n---";
}

}  // namespace memprof::test_support
