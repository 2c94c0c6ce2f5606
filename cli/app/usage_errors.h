#ifndef MEMPROF_CLI_APP_USAGE_ERRORS_H_
#define MEMPROF_CLI_APP_USAGE_ERRORS_H_

#include <CLI/CLI.hpp>
#include <string>

namespace memprof::cli {

// One-line messages for command-line mistakes (exit 2), naming the valid
// choices so the user does not have to open --help.

// "list, status, activate, ...".
std::string ValidCommands(const CLI::App& app);

// "-h/--help, --pid, --json" (without -h/--help unless `with_help`).
std::string ValidOptions(const CLI::App& app, bool with_help = true);

// For an argument nobody consumed: an unknown command or option at the top
// level, or an unexpected argument of the subcommand `command` (may be null).
std::string UnexpectedArgumentMessage(const CLI::App& app, const CLI::App* command,
                                      const std::string& argument);

// For a CLI11 parse error other than help/version.
std::string ParseErrorMessage(const CLI::App& app, const CLI::ParseError& error);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_USAGE_ERRORS_H_
