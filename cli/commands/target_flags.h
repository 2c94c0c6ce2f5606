#ifndef MEMPROF_CLI_COMMANDS_TARGET_FLAGS_H_
#define MEMPROF_CLI_COMMANDS_TARGET_FLAGS_H_

#include <CLI/CLI.hpp>

#include "cli/targets/target_options.h"

namespace memprof::cli {

// Adds the target selection options (--pid, --name, --all, --targets,
// --target, --tls-ca/--tls-cert/--tls-key, --parallel) to `command`.
CLI::Option* AddPidOption(CLI::App& command, TargetOptions& options);

// Adds --json to `command`.
CLI::Option* AddJsonFlag(CLI::App& command, bool& json);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_TARGET_FLAGS_H_
