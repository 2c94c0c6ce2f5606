#ifndef MEMPROF_CLI_COMMANDS_RUN_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_RUN_COMMAND_H_

#include <memory>
#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands/command.h"
#include "cli/launch/run_planner.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl run [--] CMD [ARGS...]`: exec CMD (same pid) with the agent and,
// if needed, jemalloc preloaded and MALLOC_CONF ready for profiling.
struct RunOptions {
  std::vector<std::string> command;  // CMD ARGS..., taken verbatim
  RunAllocator allocator = RunAllocator::kJemalloc;
};

// Reads `run`'s own options from the words after `run` — only a leading
// `--allocator NAME` (or `--allocator=NAME`; jemalloc or tcmalloc), then an
// optional `--` — and takes the rest as CMD ARGS... verbatim. An unknown
// allocator name or a missing one is kInvalidArgument.
[[nodiscard]] Result<RunOptions> ParseRunWords(const std::vector<std::string>& words);

// How `run` is called, for its help's usage line.
inline constexpr char kRunUsage[] = "[--allocator NAME] [--] CMD [ARGS...]";

// What CLI11 binds `run`'s options to; only its help shows them, since CMD
// and everything before it never go through CLI11 (SplitRunArguments).
struct RunHelpWords {
  std::string allocator;
  std::vector<std::string> command;
};

// Registers `run` (for parsing its -h and for the help listing).
CLI::App* RegisterRunCommand(CLI::App& app, RunHelpWords& words);

// memprofctl's arguments split at `run`: everything after `run` (minus one
// leading `--`) is CMD ARGS..., verbatim, even if it looks like one of our
// options. `cli_args` keeps the global options, `run` and a -h/--help among
// run's own words (before CMD and `--`, also after `--allocator NAME`).
struct SplitArguments {
  std::vector<std::string> cli_args;
  std::optional<std::vector<std::string>> run_command;  // set when the command is `run`
};
SplitArguments SplitRunArguments(const CLI::App& app, const std::vector<std::string>& args);

[[nodiscard]] Result<void> RunRun(const RunOptions& options, const RunEnvironment& env,
                                  const Executor& exec);

// The real Executor: flushes output and execve()s.
[[nodiscard]] Result<void> ExecPlanNow(const ExecPlan& plan);

// The `run` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeRunCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_RUN_COMMAND_H_
