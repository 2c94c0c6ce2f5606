#ifndef MEMPROF_CLI_APP_USAGE_ERRORS_H_
#define MEMPROF_CLI_APP_USAGE_ERRORS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace memprof::cli {

// One-line messages for command-line mistakes (exit 2), in memprofctl's own
// words, never CLI11's: each names the command and the option, says what was
// given and what is valid, and suggests the nearest command or option of a
// mistyped one (did_you_mean.h).

// "list, status, activate, ...".
std::string ValidCommands(const CLI::App& app);

// "-h/--help, --pid, --json" (without -h/--help unless `with_help`).
std::string ValidOptions(const CLI::App& app, bool with_help = true);

// The first word of `args` (the command line before CLI11 parses it, run's
// CMD ARGS... split off) that is neither a command nor an option of the
// command (or a global one), as its message: "unknown command 'stat'; did
// you mean 'stats'?", "unknown option '--fromat' for 'report'; did you mean
// '--format'?". Looked for first, so that the value after an unknown option
// is not taken for something else (`--fromat svg` would make `svg` a DUMP).
std::optional<std::string> FindUnknownWord(const CLI::App& app,
                                           const std::vector<std::string>& args);

// The word of `args` in the place of the command, as FindUnknownWord reads
// them: the first that is neither an option of `app` nor the value of one
// (before a "--"). Null when there is none. The word need not name a command.
std::optional<std::string> CommandWord(const CLI::App& app, const std::vector<std::string>& args);

// For an argument nobody consumed: an unknown command or option at the top
// level, or an unexpected argument of the subcommand `command` (may be null).
std::string UnexpectedArgumentMessage(const CLI::App& app, const CLI::App* command,
                                      const std::string& argument);

// For a CLI11 parse error other than help/version.
std::string ParseErrorMessage(const CLI::App& app, const CLI::ParseError& error);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_USAGE_ERRORS_H_
