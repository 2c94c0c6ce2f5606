#include "cli/app/cli_app.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/app/client_settings.h"
#include "cli/app/command_line.h"
#include "cli/app/multi_target_dispatch.h"
#include "cli/app/usage_errors.h"
#include "cli/client/grpc_profile_client.h"
#include "cli/commands/run_command.h"
#include "cli/io/exit_codes.h"
#include "cli/io/interrupt_watcher.h"
#include "cli/io/logging.h"
#include "cli/io/terminal.h"
#include "cli/targets/stale_socket.h"
#include "cli/targets/target_selection.h"
#include "common/duration.h"
#include "common/socket_path.h"

namespace memprof::cli {
namespace {

// Parses (run's CMD ARGS... already split off); returns an exit code when
// there is nothing more to do.
std::optional<int> Parse(CommandLine& cl, const std::vector<std::string>& cli_args,
                         const CliEnvironment& env) {
  if (auto unknown = FindUnknownWord(cl.app, cli_args)) {
    LogError(*unknown);
    return kExitUsage;
  }
  std::vector<std::string> reversed(cli_args.rbegin(), cli_args.rend());
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

// The signal memprofctl dies by after the command returned: none for a
// command that ends on a signal; the first one for a command that dies by it;
// for `profile`, only the second one, which aborted it.
int SignalToReRaise(SignalEnd end, const InterruptWatcher& watcher, const Result<void>& result) {
  switch (end) {
    case SignalEnd::kEndsNormally:
      return 0;
    case SignalEnd::kDies:
      return watcher.received_signal();
    case SignalEnd::kEndsEarly: {
      const bool aborted = !result && result.error().code == ErrorCode::kCancelled;
      return aborted ? watcher.abort_signal() : 0;
    }
  }
  return 0;
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
// The TLS files for remote agents may also come from the environment and the
// config file (client_settings.h).
Result<void> DispatchTargets(Command& command, const CommandContext& context,
                             const std::string& config) {
  TargetOptions* options = command.target_options();
  if (options == nullptr) return command.Run(context);
  // Sockets left by processes killed by a signal go whenever someone looks
  // for agents, not only when someone runs `list` (which, like the
  // exporter, prunes in its own scan).
  PruneStaleSockets(*context.discovery, ::geteuid());
  auto tls_defaults = LoadTlsDefaults(config, context.env.variables);
  if (!tls_defaults) return Fail(tls_defaults.error());
  options->tls_defaults = std::move(*tls_defaults);
  auto selection = SelectTargets(*options, *context.discovery);
  if (!selection) return Fail(selection.error());
  if (selection->multi) return RunOnSelectedTargets(command, *selection, *options, context);
  if (auto ok = ApplySingleTarget(*selection, *options, *context.discovery, *context.client); !ok) {
    return ok;
  }
  return command.Run(context);
}

int RunAgentCommand(const CommandLine& cl, Command& command, const CliEnvironment& env) {
  std::unique_ptr<InterruptWatcher> watcher;
  if (env.watch_signals) {
    auto started = InterruptWatcher::Start();
    if (!started) return Finish(Fail(started.error()), *env.out);
    watcher = std::move(*started);
  }
  const SignalEnd end = command.signal_end();
  std::stop_token cancel;
  std::stop_token end_early;
  if (watcher) {
    cancel = end == SignalEnd::kEndsEarly ? watcher->abort_token() : watcher->stop_token();
    if (end == SignalEnd::kEndsEarly) end_early = watcher->stop_token();
  }
  const auto timeout =
      ParseDuration(cl.timeout, kMinTimeout, kMaxTimeout).value_or(std::chrono::seconds(10));
  auto client = env.make_client(timeout, cancel);
  TargetDiscovery discovery(env.proc_root, env.socket_dir);
  const Console console{*env.out, *env.err, cl.quiet};
  const CommandContext context{env,    console,   &discovery, client.get(),
                               cancel, end_early, timeout,    {}};
  const Result<void> result = DispatchTargets(command, context, cl.config);
  const int code = Finish(result, *env.out);
  if (watcher) {
    if (const int signal = SignalToReRaise(end, *watcher, result); signal != 0) {
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
  for (const std::string& name : SettingsVariables()) {
    if (const char* value = std::getenv(name.c_str())) env.variables[name] = value;
  }
  env.stdout_is_terminal = ::isatty(STDOUT_FILENO) == 1;
  env.stdout_redraws = CanRedraw(STDOUT_FILENO);
  env.stderr_redraws = CanRedraw(STDERR_FILENO);
  env.make_client = [](std::chrono::milliseconds timeout, std::stop_token stop) {
    return std::make_unique<GrpcProfileClient>(timeout, std::move(stop));
  };
  env.run_environment = CurrentRunEnvironment;
  env.exec = ExecPlanNow;
  return env;
}

int RunCli(const std::vector<std::string>& args, const CliEnvironment& env) {
  ConfigureLogging(*env.err, 0);
  CommandLine cl(args);
  SplitArguments split = SplitRunArguments(cl.app, args);
  if (auto done = Parse(cl, split.cli_args, env)) return *done;
  ConfigureLogging(*env.err, cl.quiet ? -1 : cl.verbosity);
  if (auto done = CheckLeftovers(cl)) return *done;
  auto printed = cl.PrintHelpOrVersion(*env.out);
  if (!printed) return Finish(Fail(printed.error()), *env.out);
  if (*printed) return Finish({}, *env.out);
  Command& command = *cl.ParsedCommand();
  if (command.talks_to_agents()) return RunAgentCommand(cl, command, env);
  const Console console{*env.out, *env.err, cl.quiet};
  const CommandContext context{env,
                               console,
                               nullptr,
                               nullptr,
                               {},
                               {},
                               std::chrono::milliseconds(0),
                               split.run_command.value_or(std::vector<std::string>())};
  return Finish(command.Run(context), *env.out);
}

}  // namespace memprof::cli
