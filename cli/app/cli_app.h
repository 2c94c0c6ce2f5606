#ifndef MEMPROF_CLI_APP_CLI_APP_H_
#define MEMPROF_CLI_APP_CLI_APP_H_

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <stop_token>
#include <string>
#include <vector>

#include "cli/client/profile_client.h"
#include "cli/commands/run_command.h"
#include "cli/launch/run_planner.h"

namespace memprof::cli {

// The seams of memprofctl: everything RunCli needs from the outside world.
// ProductionEnvironment() fills them with the real thing; tests replace them.
struct CliEnvironment {
  std::ostream* out = nullptr;  // stdout
  std::ostream* err = nullptr;  // stderr (the logger writes here too)
  std::string proc_root = "/proc";
  std::string socket_dir;
  std::function<std::unique_ptr<ProfileClient>(std::chrono::milliseconds timeout,
                                               std::stop_token stop)>
      make_client;
  std::function<RunEnvironment()> run_environment;
  Executor exec;
  // Turn SIGINT/SIGTERM into cancellation (InterruptWatcher) for target commands.
  bool watch_signals = true;
  // Binary output (report --format pprof) is refused on a terminal.
  bool stdout_is_terminal = false;
  // `profile` draws a progress bar on a terminal, and nothing otherwise.
  bool stderr_is_terminal = false;
};

// std::cout/std::cerr, /proc, $MEMPROF_SOCKET_DIR, GrpcProfileClient, execve.
CliEnvironment ProductionEnvironment();

// Parses `args` (without the program name), runs the command and returns the
// exit code; usage errors print one line and return 2. If a signal
// interrupted a target command, this cleans up and re-raises it instead of
// returning.
int RunCli(const std::vector<std::string>& args, const CliEnvironment& env);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_CLI_APP_H_
