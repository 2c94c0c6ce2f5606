#ifndef MEMPROF_CLI_APP_COMMAND_LINE_H_
#define MEMPROF_CLI_APP_COMMAND_LINE_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/app/help_text.h"
#include "cli/commands/command.h"

namespace memprof::cli {

// Bounds of the global --timeout.
inline constexpr std::chrono::milliseconds kMinTimeout(100);
inline constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::hours(1);

// The command line: the CLI11 app, the global options and every command
// (command_registry.cc), each registered as a subcommand holding its own
// options.
struct CommandLine {
  CLI::App app{RootDescription(), "memprofctl"};
  int verbosity = 0;
  bool quiet = false;  // -q: errors only on stderr
  std::string timeout = "10s";
  std::string config;  // --config FILE (client_settings.h)
  std::vector<std::unique_ptr<Command>> commands;
  std::vector<CLI::App*> subcommands;  // commands[i] is registered as subcommands[i]
  // `memprofctl help [COMMAND]` and `memprofctl version`: --help and
  // --version as commands, for those who type them so.
  CLI::App* help = nullptr;
  std::string help_topic;  // COMMAND, "" for memprofctl's own help
  CLI::App* version = nullptr;

  CommandLine();

  // The command that was parsed, or nullptr when none was (or help/version).
  Command* ParsedCommand() const;

  // For `help` and `version`: prints what `--help`, `COMMAND --help` or
  // `--version` print and returns true; false for any other command.
  // kInvalidArgument for help about a command that does not exist.
  [[nodiscard]] Result<bool> PrintHelpOrVersion(std::ostream& out) const;

 private:
  void AddHelpCommands();
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_COMMAND_LINE_H_
