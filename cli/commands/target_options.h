#ifndef MEMPROF_CLI_COMMANDS_TARGET_OPTIONS_H_
#define MEMPROF_CLI_COMMANDS_TARGET_OPTIONS_H_

#include <sys/types.h>

#include <CLI/CLI.hpp>

namespace memprof::cli {

// Options shared by the commands that talk to one agent.
struct TargetOptions {
  pid_t pid = 0;  // 0: $MEMPROF_PID, else the only discoverable agent
  bool json = false;
};

// Adds --pid N (falling back to $MEMPROF_PID) to `command`.
CLI::Option* AddPidOption(CLI::App& command, TargetOptions& options);

// Adds --json to `command`.
CLI::Option* AddJsonFlag(CLI::App& command, bool& json);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_TARGET_OPTIONS_H_
