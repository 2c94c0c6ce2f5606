#ifndef MEMPROF_CLI_APP_CLI_APP_H_
#define MEMPROF_CLI_APP_CLI_APP_H_

#include <string>
#include <vector>

#include "cli/commands/command.h"

namespace memprof::cli {

// std::cout/std::cerr, /proc, $MEMPROF_SOCKET_DIR, GrpcProfileClient, execve.
CliEnvironment ProductionEnvironment();

// Parses `args` (without the program name), runs the command and returns the
// exit code; usage errors print one line and return 2. If a signal
// interrupted a command that dies by it (Command::signal_end), this cleans up
// and re-raises it instead of returning.
int RunCli(const std::vector<std::string>& args, const CliEnvironment& env);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_CLI_APP_H_
