#ifndef MEMPROF_CLI_COMMANDS_COMMAND_REGISTRY_H_
#define MEMPROF_CLI_COMMANDS_COMMAND_REGISTRY_H_

#include <memory>
#include <vector>

#include "cli/commands/command.h"

namespace memprof::cli {

// Every memprofctl command, in the order `memprofctl --help` lists them.
std::vector<std::unique_ptr<Command>> MakeCommands();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_COMMAND_REGISTRY_H_
