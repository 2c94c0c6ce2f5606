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

// The command line: the CLI11 app, the global options and the commands
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

  // Every command registered.
  CommandLine();
  // For parsing `args`: when they name a command (CommandWord) and ask for
  // no help or version, only that one is registered. Registering all of
  // them takes 1.2 to 1.7 ms of every start (CLI11 builds each option, its
  // validators and its help text): 8% of a `stats`. Nothing else reads the
  // others: a message that lists the commands comes from a word that is not
  // one, and help registers all.
  explicit CommandLine(const std::vector<std::string>& args);

  // The command that was parsed, or nullptr when none was (or help/version).
  Command* ParsedCommand() const;

  // For `help` and `version`: prints what `--help`, `COMMAND --help` or
  // `--version` print and returns true; false for any other command.
  // kInvalidArgument for help about a command that does not exist.
  [[nodiscard]] Result<bool> PrintHelpOrVersion(std::ostream& out) const;

 private:
  void AddGlobalOptions();
  void AddCommands();
  void AddHelpCommands();
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_COMMAND_LINE_H_
