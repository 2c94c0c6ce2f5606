#include "cli/app/cli_app.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>

#include "cli/app/command_line.h"
#include "cli/app/multi_target_dispatch.h"
#include "cli/app/usage_errors.h"
#include "cli/client/grpc_profile_client.h"
#include "cli/io/exit_codes.h"
#include "cli/io/interrupt_watcher.h"
#include "cli/io/logging.h"
#include "cli/targets/target_selection.h"
#include "common/duration.h"
#include "common/socket_path.h"

namespace memprof::cli {
namespace {

// Parses; returns an exit code when there is nothing more to do.
std::optional<int> Parse(CommandLine& cl, const std::vector<std::string>& args,
                         const CliEnvironment& env) {
  SplitArguments split = SplitRunArguments(cl.app, args);
  if (split.run_command) cl.run.command = std::move(*split.run_command);
  std::vector<std::string> reversed(split.cli_args.rbegin(), split.cli_args.rend());
  try {
    cl.app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return cl.app.exit(e, *env.out, *env.err);
  } catch (const CLI::CallForAllHelp& e) {
    return cl.app.exit(e, *env.out, *env.err);
  } catch (const CLI::CallForVersion& e) {
    *env.out << e.what() << '\n';
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    LogError(ParseErrorMessage(cl.app, e));
    return kExitUsage;
  }
  return std::nullopt;
}

// Rejects leftovers and a missing command.
std::optional<int> CheckLeftovers(CommandLine& cl) {
  const std::vector<std::string> extras = cl.app.remaining();
  const auto parsed = cl.app.get_subcommands();
  const CLI::App* command = parsed.empty() ? nullptr : parsed.front();
  if (!extras.empty()) {
    LogError(UnexpectedArgumentMessage(cl.app, command, extras.front()));
    return kExitUsage;
  }
  if (command == nullptr) {
    LogError("missing command (valid commands: " + ValidCommands(cl.app) +
             "); run `memprofctl --help` for usage");
    return kExitUsage;
  }
  return std::nullopt;
}

Result<void> Dispatch(const CommandLine& cl, const CliEnvironment& env, TargetDiscovery& discovery,
                      ProfileClient& client, const Console& console, std::stop_token stop) {
  if (cl.list_cmd->parsed()) return RunList(cl.list, discovery, client, console.out);
  if (cl.status_cmd->parsed()) return RunStatus(cl.status, discovery, client, console.out);
  if (cl.activate_cmd->parsed()) return RunActivate(cl.activate, discovery, client, console.out);
  if (cl.deactivate_cmd->parsed()) {
    return RunDeactivate(cl.deactivate, discovery, client, console.out);
  }
  if (cl.dump_cmd->parsed()) return RunDump(cl.dump, discovery, client, console, std::move(stop));
  if (cl.stats_cmd->parsed()) {
    return RunStatsCommand(cl.stats, discovery, client, console.out, env.stdout_is_terminal, stop);
  }
  if (cl.exporter_cmd->parsed()) {
    const TimedClientFactory make_client = [&env, stop](std::chrono::milliseconds timeout) {
      return env.make_client(timeout, stop);
    };
    return RunExporter(cl.exporter, discovery, make_client, console, stop);
  }
  return Fail(ErrorCode::kInternal, "no command to run");
}

int Finish(const Result<void>& result, std::ostream& out) {
  if (!result) {
    LogError(result.error().message);
    return ExitCodeFor(result.error().code);
  }
  if (!out.flush()) {
    LogError("cannot write to stdout");
    return kExitFailure;
  }
  return kExitOk;
}

// `profile`: the first signal only ends its window early (end_early), so
// its client is cancelled by the second (abort), and the state is restored
// through a client that nothing cancels.
Result<void> DispatchProfile(const CommandLine& cl, const CliEnvironment& env,
                             TargetDiscovery& discovery, ProfileClient& client,
                             const Console& console, const InterruptWatcher* watcher,
                             std::chrono::milliseconds timeout) {
  auto restore_client = env.make_client(timeout, std::stop_token());
  ProfileRuntime runtime;
  if (watcher != nullptr) {
    runtime.end_early = watcher->stop_token();
    runtime.abort = watcher->abort_token();
  }
  runtime.restore_client = restore_client.get();
  runtime.progress = env.stderr_is_terminal;
  return RunProfile(cl.profile, discovery, client, console, runtime);
}

// Commands that run until told to stop (dump --every, stats --watch,
// exporter): SIGINT/SIGTERM is their normal end, so they exit with their own
// status (0) instead of dying by the signal.
bool EndsOnSignal(const CommandLine& cl) {
  return cl.exporter_cmd->parsed() || (cl.stats_cmd->parsed() && !cl.stats.watch.empty()) ||
         (cl.dump_cmd->parsed() && !cl.dump.every.empty());
}

// The signal a target command dies by: the first one, except for `profile`,
// which dies only when a second one aborted it, and the commands that end on
// a signal, which do not die by it.
int SignalToReRaise(const CommandLine& cl, const InterruptWatcher& watcher,
                    const Result<void>& result) {
  if (EndsOnSignal(cl)) return 0;
  if (!cl.profile_cmd->parsed()) return watcher.received_signal();
  const bool aborted = !result && result.error().code == ErrorCode::kCancelled;
  return aborted ? watcher.abort_signal() : 0;
}

// A single-target run names its one target in the options: a pid, or a
// remote agent that is looked up now (no spec: the only agent, --name).
Result<void> ApplySingleTarget(const TargetSelection& selection, TargetOptions& options,
                               const TargetDiscovery& discovery, ProfileClient& client) {
  if (selection.specs.empty()) return {};
  const TargetSpec& spec = selection.specs.front();
  if (spec.kind == TargetSpec::Kind::kPid) {
    options.pid = spec.pid;
    return {};
  }
  auto target = ResolveSpec(spec, selection, discovery, client);
  if (!target) return Fail(target.error());
  options.resolved = *target;
  return {};
}

// Picks the targets, then runs the command on one or on each.
Result<void> DispatchTargets(CommandLine& cl, const CliEnvironment& env,
                             TargetDiscovery& discovery, ProfileClient& client,
                             const Console& console, const InterruptWatcher* watcher,
                             std::chrono::milliseconds timeout, const std::stop_token& stop) {
  TargetOptions* options = ParsedTargetOptions(cl);
  if (options != nullptr) {
    auto selection = SelectTargets(*options, discovery);
    if (!selection) return Fail(selection.error());
    if (selection->multi) {
      return RunOnSelectedTargets(cl, env, *selection, *options, discovery, console, watcher,
                                  timeout);
    }
    if (auto ok = ApplySingleTarget(*selection, *options, discovery, client); !ok) return ok;
  }
  if (cl.profile_cmd->parsed()) {
    return DispatchProfile(cl, env, discovery, client, console, watcher, timeout);
  }
  return Dispatch(cl, env, discovery, client, console, stop);
}

int RunTargetCommand(CommandLine& cl, const CliEnvironment& env) {
  std::unique_ptr<InterruptWatcher> watcher;
  if (env.watch_signals) {
    auto started = InterruptWatcher::Start();
    if (!started) return Finish(Fail(started.error()), *env.out);
    watcher = std::move(*started);
  }
  const bool profile = cl.profile_cmd->parsed();
  std::stop_token stop;
  if (watcher) stop = profile ? watcher->abort_token() : watcher->stop_token();
  const auto timeout =
      ParseDuration(cl.timeout, kMinTimeout, kMaxTimeout).value_or(std::chrono::seconds(10));
  auto client = env.make_client(timeout, stop);
  TargetDiscovery discovery(env.proc_root, env.socket_dir);
  const Console console{*env.out, *env.err};
  const Result<void> result =
      DispatchTargets(cl, env, discovery, *client, console, watcher.get(), timeout, stop);
  const int code = Finish(result, *env.out);
  if (watcher) {
    if (const int signal = SignalToReRaise(cl, *watcher, result); signal != 0) {
      InterruptWatcher::ReRaise(signal);
    }
  }
  return code;
}

}  // namespace

CliEnvironment ProductionEnvironment() {
  CliEnvironment env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.socket_dir = SocketDirectory();
  env.stdout_is_terminal = ::isatty(STDOUT_FILENO) == 1;
  env.stderr_is_terminal = ::isatty(STDERR_FILENO) == 1;
  env.make_client = [](std::chrono::milliseconds timeout, std::stop_token stop) {
    return std::make_unique<GrpcProfileClient>(timeout, std::move(stop));
  };
  env.run_environment = CurrentRunEnvironment;
  env.exec = ExecPlanNow;
  return env;
}

int RunCli(const std::vector<std::string>& args, const CliEnvironment& env) {
  ConfigureLogging(*env.err, 0);
  CommandLine cl;
  if (auto done = Parse(cl, args, env)) return *done;
  ConfigureLogging(*env.err, cl.verbosity);
  if (auto done = CheckLeftovers(cl)) return *done;
  if (cl.run_cmd->parsed()) {
    return Finish(RunRun(cl.run, env.run_environment(), env.exec), *env.out);
  }
  if (cl.report_cmd->parsed()) {
    return Finish(RunReport(cl.report, Console{*env.out, *env.err}, env.stdout_is_terminal),
                  *env.out);
  }
  return RunTargetCommand(cl, env);
}

}  // namespace memprof::cli
