#ifndef MEMPROF_CLI_COMMANDS_COMMAND_REGISTRY_H_
#define MEMPROF_CLI_COMMANDS_COMMAND_REGISTRY_H_

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "cli/commands/command.h"

namespace memprof::cli {

// A command's name, as its Register() names its subcommand, and its maker.
struct CommandEntry {
  std::string_view name;
  std::unique_ptr<Command> (*make)();
};

// Every memprofctl command, in the order `memprofctl --help` lists them.
std::span<const CommandEntry> CommandTable();

// Every command, made.
std::vector<std::unique_ptr<Command>> MakeCommands();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_COMMAND_REGISTRY_H_
