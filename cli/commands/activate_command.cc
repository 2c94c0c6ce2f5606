#include "cli/commands/activate_command.h"

#include "cli/commands/profiling_format.h"
#include "cli/human_format.h"
#include "cli/option_validators.h"
#include "common/duration.h"

namespace memprof::cli {

CLI::App* RegisterActivateCommand(CLI::App& app, ActivateOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "activate", "Start sampling allocations (jemalloc prof.active=true); idempotent");
  AddPidOption(*cmd, options.target);
  cmd->add_option("--for", options.duration,
                  "Stop sampling by itself after this long (1s to 24h, e.g. 30s, 5m, 1h30m); "
                  "default: until `memprofctl deactivate`")
      ->check(DurationValidator(kMinWindow, kMaxWindow))
      ->type_name("DURATION");
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(
      "Examples:\n"
      "  memprofctl activate --pid 1234            # until deactivated\n"
      "  memprofctl activate --pid 1234 --for 5m   # the agent stops sampling after 5 minutes\n");
  return cmd;
}

Result<void> RunActivate(const ActivateOptions& options, TargetDiscovery& discovery,
                         ProfileClient& client, std::ostream& out) {
  memprof::v1::ActivateRequest request;
  if (!options.duration.empty()) {
    auto duration = ParseDuration(options.duration);
    if (!duration) return Fail(ErrorCode::kInvalidArgument, "--for: " + duration.error().message);
    request.set_duration_ms(static_cast<uint64_t>(duration->count()));
  }
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto response = client.Activate(*target, request);
  if (!response) return Fail(response.error());
  if (options.target.json) {
    out << ActivationToJson(*response, target->pid).dump(2) << '\n';
  } else {
    out << DescribeActivation(*response, target->pid, std::chrono::system_clock::now()) << '\n';
  }
  return {};
}

std::string DescribeActivation(const memprof::v1::ActivateResponse& response, pid_t pid,
                               std::chrono::system_clock::time_point now) {
  const std::string who = "pid " + std::to_string(pid) + ": ";
  const std::string until = DescribeWindowEnd(response.current().window_end_unix_ms(), now);
  if (!response.previous().active()) {
    return who + "profiling activated (was inactive), " + until;
  }
  if (response.window_replaced()) {
    const int64_t old_end = response.previous().window_end_unix_ms();
    const std::string old_window =
        old_end == 0 ? std::string("the previous window")
                     : "the previous window (until " + FormatLocalTime(old_end) + ")";
    return who + "profiling already active; " + old_window + " was replaced, now active " + until;
  }
  return who + "profiling already active, " + until;
}

nlohmann::json ActivationToJson(const memprof::v1::ActivateResponse& response, pid_t pid) {
  return {{"pid", pid},
          {"previous", ProfilingStateToJson(response.previous())},
          {"current", ProfilingStateToJson(response.current())},
          {"window_replaced", response.window_replaced()}};
}

}  // namespace memprof::cli
