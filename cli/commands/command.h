#ifndef MEMPROF_CLI_COMMANDS_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <stop_token>
#include <string>
#include <vector>

#include "cli/client/profile_client.h"
#include "cli/io/console.h"
#include "cli/launch/run_planner.h"
#include "cli/targets/multi_target_run.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "cli/targets/target_selection.h"
#include "common/result.h"

namespace memprof::cli {

// Replaces the current process with an exec plan (`run`); returns only on
// failure.
using Executor = std::function<Result<void>(const ExecPlan& plan)>;

// The seams of memprofctl: everything a command needs from the outside
// world. ProductionEnvironment() (cli/app/cli_app.h) fills them with the real
// thing; tests replace them.
struct CliEnvironment {
  std::ostream* out = nullptr;  // stdout
  std::ostream* err = nullptr;  // stderr (the logger writes here too)
  std::string proc_root = "/proc";
  std::string socket_dir;
  // The environment variables of memprofctl's own settings
  // (client_settings.h: MEMPROFCTL_*, XDG_CONFIG_HOME, HOME).
  std::map<std::string, std::string> variables;
  StoppableClientFactory make_client;
  std::function<RunEnvironment()> run_environment;
  Executor exec;
  // Turn SIGINT/SIGTERM into cancellation (InterruptWatcher) for the
  // commands that talk to agents.
  bool watch_signals = true;
  // Binary output (report --format pprof) is refused on a terminal.
  bool stdout_is_terminal = false;
  // stdout is a terminal that takes cursor movement (CanRedraw): `stats
  // --watch` redraws its table in place there, and prints one table after
  // another on a dumb terminal.
  bool stdout_redraws = false;
  // stderr is a terminal that takes "erase line" (CanRedraw): `profile`'s
  // progress bar and report's debuginfod line are drawn only there.
  bool stderr_redraws = false;
};

// How a command ends on SIGINT/SIGTERM.
enum class SignalEnd {
  // The first signal cancels it; memprofctl cleans up and dies by that signal.
  kDies,
  // Runs until told to stop (exporter, dump --every, stats --watch): the
  // signal is its normal end, and memprofctl exits with the command's status.
  kEndsNormally,
  // profile: the first signal ends its window early and it still finishes;
  // a second one aborts it, and memprofctl dies by that one.
  kEndsEarly,
};

// What a command runs with. `discovery` and `client` are null for commands
// that never talk to an agent.
struct CommandContext {
  const CliEnvironment& env;
  const Console& console;
  TargetDiscovery* discovery = nullptr;
  ProfileClient* client = nullptr;
  // Cancels the command: the first signal (kDies, kEndsNormally), the second
  // (kEndsEarly), or in a multi-target run also the target's deadline.
  std::stop_token cancel;
  // kEndsEarly: the first signal.
  std::stop_token end_early;
  std::chrono::milliseconds timeout{0};  // --timeout: each request's deadline
  // What followed the command name verbatim, past CLI11 (run's CMD ARGS...).
  std::vector<std::string> verbatim_args;
};

// One memprofctl command: its name and options, whether it takes targets and
// how it runs on several, how it ends on a signal, and its run function.
// Adding a command is one file implementing this and one line in
// command_registry.cc; cli/app does the rest (parsing, choosing targets,
// signals, exit codes). Instances live for one memprofctl run and hold the
// parsed options; RunOnTarget is called from several threads at once and
// must not change them.
class Command {
 public:
  virtual ~Command() = default;

  // Adds the subcommand and its options to `app`; returns it.
  virtual CLI::App* Register(CLI::App& app) = 0;

  // The arguments of its help's usage line ("[--allocator NAME] [--] CMD
  // [ARGS...]"), when CLI11's "[OPTIONS] ..." would not say how to call it.
  virtual std::string usage() const { return ""; }

  // Whether it talks to agents, and so needs target discovery, a client and
  // signal handling (report and run do not).
  virtual bool talks_to_agents() const { return true; }

  // The options naming its targets (--pid, --all, --targets, ...), or
  // nullptr for a command that finds its targets itself (list, exporter) or
  // has none (report, run).
  virtual TargetOptions* target_options() { return nullptr; }

  // How it ends on SIGINT/SIGTERM, as parsed (dump --every ends normally).
  virtual SignalEnd signal_end() const { return SignalEnd::kDies; }

  // Runs on the one target its options name, or on none.
  [[nodiscard]] virtual Result<void> Run(const CommandContext& context) = 0;

  // Before a multi-target run contacts anyone: a usage error
  // (kInvalidArgument) when the command, as parsed, works on one target only
  // (e.g. dump --out FILE).
  [[nodiscard]] virtual Result<void> CheckManyTargets() const { return {}; }

  // How much longer than --timeout each target of a multi-target run may take
  // (profile: its window).
  [[nodiscard]] virtual Result<std::chrono::milliseconds> ExtraTimePerTarget() const {
    return std::chrono::milliseconds(0);
  }

  // The work for one target of a multi-target run: Run with a copy of the
  // options that names `target`.
  [[nodiscard]] virtual Result<void> RunOnTarget(const Target& target,
                                                 const CommandContext& context) const;

  // Runs on every target of `selection`: by default RunOnTarget on each,
  // `plan.parallel` at once (RunOnTargets).
  [[nodiscard]] virtual Result<void> RunOnMany(const TargetSelection& selection,
                                               const MultiTargetPlan& plan,
                                               const CommandContext& context) const;
};

// The usage error of a periodic command (`flag`: --every, --watch) given
// several targets.
Error FollowsOneTarget(const std::string& flag);

// `options` with `target` as the resolved target (for RunOnTarget).
template <typename Options>
Options ForTarget(const Options& options, const Target& target) {
  Options copy = options;
  copy.target.resolved = target;
  return copy;
}

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_COMMAND_H_
