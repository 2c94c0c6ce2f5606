#include "cli/cli_app.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>

#include "cli/commands/activate_command.h"
#include "cli/commands/deactivate_command.h"
#include "cli/commands/dump_command.h"
#include "cli/commands/exporter_command.h"
#include "cli/commands/list_command.h"
#include "cli/commands/profile_command.h"
#include "cli/commands/report_command.h"
#include "cli/commands/stats_command.h"
#include "cli/commands/status_command.h"
#include "cli/exit_codes.h"
#include "cli/grpc_profile_client.h"
#include "cli/help_text.h"
#include "cli/interrupt_watcher.h"
#include "cli/logging.h"
#include "cli/multi_target_run.h"
#include "cli/option_validators.h"
#include "cli/target_selection.h"
#include "cli/usage_errors.h"
#include "common/duration.h"
#include "common/socket_path.h"
#include "common/version.h"

namespace memprof::cli {
namespace {

constexpr std::chrono::milliseconds kMinTimeout(100);
constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::hours(1);

// The parsed command line: the CLI11 app and every command's options.
struct CommandLine {
  CLI::App app{RootDescription(), "memprofctl"};
  int verbosity = 0;
  std::string timeout = "10s";
  ListOptions list;
  StatusOptions status;
  ActivateOptions activate;
  DeactivateOptions deactivate;
  DumpOptions dump;
  ProfileOptions profile;
  StatsOptions stats;
  ExporterOptions exporter;
  ReportOptions report;
  RunOptions run;
  CLI::App* list_cmd = nullptr;
  CLI::App* status_cmd = nullptr;
  CLI::App* activate_cmd = nullptr;
  CLI::App* deactivate_cmd = nullptr;
  CLI::App* dump_cmd = nullptr;
  CLI::App* profile_cmd = nullptr;
  CLI::App* stats_cmd = nullptr;
  CLI::App* exporter_cmd = nullptr;
  CLI::App* report_cmd = nullptr;
  CLI::App* run_cmd = nullptr;

  CommandLine();
};

CommandLine::CommandLine() {
  app.set_version_flag("--version", std::string("memprofctl ") + kVersion);
  app.add_flag("-v,--verbose", verbosity, "More log output on stderr (-vv for debug)");
  app.add_option("--timeout", timeout, "Deadline of each request to an agent (default 10s)")
      ->check(DurationValidator(kMinTimeout, kMaxTimeout))
      ->type_name("DURATION");
  list_cmd = RegisterListCommand(app, list);
  status_cmd = RegisterStatusCommand(app, status);
  activate_cmd = RegisterActivateCommand(app, activate);
  deactivate_cmd = RegisterDeactivateCommand(app, deactivate);
  dump_cmd = RegisterDumpCommand(app, dump);
  profile_cmd = RegisterProfileCommand(app, profile);
  stats_cmd = RegisterStatsCommand(app, stats);
  exporter_cmd = RegisterExporterCommand(app, exporter);
  report_cmd = RegisterReportCommand(app, report);
  run_cmd = RegisterRunCommand(app);
  for (CLI::App* cmd : {list_cmd, status_cmd, activate_cmd, deactivate_cmd, dump_cmd, profile_cmd,
                        stats_cmd, exporter_cmd, report_cmd}) {
    cmd->fallthrough();  // global options may follow the command name
  }
  // Set after the subcommands so they do not inherit these: leftovers reach
  // the top level, where RunCli reports them with the valid choices.
  app.require_subcommand(0, 1);
  app.allow_extras();
  app.footer(RootFooter());
}

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

// The target options of the parsed command; nullptr for the commands that
// find their targets themselves (list, exporter).
TargetOptions* ParsedTargetOptions(CommandLine& cl) {
  if (cl.status_cmd->parsed()) return &cl.status.target;
  if (cl.activate_cmd->parsed()) return &cl.activate.target;
  if (cl.deactivate_cmd->parsed()) return &cl.deactivate.target;
  if (cl.dump_cmd->parsed()) return &cl.dump.target;
  if (cl.profile_cmd->parsed()) return &cl.profile.target;
  if (cl.stats_cmd->parsed()) return &cl.stats.target;
  return nullptr;
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

// What cannot be done on several targets at once (usage errors, before any
// target is contacted).
Result<void> CheckMultiTarget(const CommandLine& cl) {
  const auto refuse = [](const std::string& why) {
    return Fail(ErrorCode::kInvalidArgument, why);
  };
  if (cl.dump_cmd->parsed() && cl.dump.out_dir.empty()) {
    return refuse("with several targets, dump writes one file per target: use --out-dir DIR");
  }
  if (cl.profile_cmd->parsed() && cl.profile.out_dir.empty()) {
    return refuse("with several targets, profile writes one file per target: use --out-dir DIR");
  }
  const bool periodic = (cl.dump_cmd->parsed() && !cl.dump.every.empty()) ||
                        (cl.stats_cmd->parsed() && !cl.stats.watch.empty());
  if (periodic) {
    return refuse(std::string(cl.dump_cmd->parsed() ? "--every" : "--watch") +
                  " follows one target; for several, repeat the multi-target command from a "
                  "loop or a timer (docs/user-guide.md, \"Collecting from a fleet\")");
  }
  return {};
}

// `options` with the target of one worker of a multi-target run.
template <typename Options>
Options ForTarget(const Options& options, const Target& target) {
  Options copy = options;
  copy.target.resolved = target;
  copy.target.pid = target.pid;
  return copy;
}

TargetTask MultiTargetTask(const CommandLine& cl, const CliEnvironment& env,
                           TargetDiscovery& discovery, const InterruptWatcher* watcher,
                           std::chrono::milliseconds timeout) {
  using Stop = const std::stop_token&;
  if (cl.status_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunStatus(ForTarget(cl.status, t), discovery, c, con.out);
    };
  }
  if (cl.activate_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunActivate(ForTarget(cl.activate, t), discovery, c, con.out);
    };
  }
  if (cl.deactivate_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunDeactivate(ForTarget(cl.deactivate, t), discovery, c, con.out);
    };
  }
  if (cl.dump_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop stop) {
      return RunDump(ForTarget(cl.dump, t), discovery, c, con, stop);
    };
  }
  if (cl.stats_cmd->parsed()) {
    return [&](const Target& t, ProfileClient& c, const Console& con, Stop) {
      return RunStats(ForTarget(cl.stats, t), discovery, c, con.out);
    };
  }
  // profile: the first signal ends every window early; the second, or the
  // target's deadline, aborts (stop).
  return [&, watcher, timeout](const Target& t, ProfileClient& c, const Console& con, Stop stop) {
    auto restore_client = env.make_client(timeout, std::stop_token());
    ProfileRuntime runtime;
    if (watcher != nullptr) runtime.end_early = watcher->stop_token();
    runtime.abort = stop;
    runtime.restore_client = restore_client.get();
    return RunProfile(ForTarget(cl.profile, t), discovery, c, con, runtime);
  };
}

Result<void> DispatchMulti(const CommandLine& cl, const CliEnvironment& env,
                           const TargetSelection& selection, const TargetOptions& options,
                           TargetDiscovery& discovery, const Console& console,
                           const InterruptWatcher* watcher, std::chrono::milliseconds timeout) {
  if (auto ok = CheckMultiTarget(cl); !ok) return ok;
  MultiTargetPlan plan;
  plan.parallel = options.parallel;
  plan.rpc_timeout = timeout;
  plan.per_target_timeout = timeout;
  plan.json = options.json;
  std::stop_token stop;
  if (watcher != nullptr) stop = watcher->stop_token();
  if (cl.profile_cmd->parsed()) {
    auto duration = ParseDuration(cl.profile.duration);
    if (!duration) return Fail(ErrorCode::kInvalidArgument, "--duration: " + duration.error().message);
    plan.per_target_timeout += *duration;
    if (watcher != nullptr) stop = watcher->abort_token();
  }
  const StoppableClientFactory make_client = env.make_client;
  if (cl.stats_cmd->parsed() && cl.stats.format == "prometheus") {
    return RunStatsPrometheusOnTargets(selection, plan, discovery, make_client, console, stop);
  }
  const TargetTask task = MultiTargetTask(cl, env, discovery, watcher, timeout);
  return RunOnTargets(selection, plan, discovery, make_client, task, console, stop);
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
      return DispatchMulti(cl, env, *selection, *options, discovery, console, watcher, timeout);
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
