#ifndef MEMPROF_CLI_COMMANDS_TARGET_OPTIONS_H_
#define MEMPROF_CLI_COMMANDS_TARGET_OPTIONS_H_

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <string>

#include "cli/target_discovery.h"

namespace memprof::cli {

// Options shared by the commands that talk to one agent.
struct TargetOptions {
  pid_t pid = 0;     // 0: $MEMPROF_PID, else the only discoverable agent
  std::string name;  // --name REGEX instead of a pid
  bool json = false;

  TargetSelector selector() const { return TargetSelector{pid, name}; }
};

// Adds --pid N (falling back to $MEMPROF_PID) and --name REGEX to `command`.
CLI::Option* AddPidOption(CLI::App& command, TargetOptions& options);

// Adds --json to `command`.
CLI::Option* AddJsonFlag(CLI::App& command, bool& json);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_TARGET_OPTIONS_H_
