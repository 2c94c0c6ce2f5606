#include "cli/commands/deactivate_command.h"

#include "cli/client/capture_format.h"
#include "cli/client/profiling_format.h"
#include "cli/commands/target_flags.h"
#include "cli/io/human_format.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {

CLI::App* RegisterDeactivateCommand(CLI::App& app, DeactivateOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "deactivate", "Stop sampling allocations; samples collected so far are kept for `dump`");
  AddPidOption(*cmd, options.target);
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer("Examples:\n  memprofctl deactivate --pid 1234\n");
  return cmd;
}

Result<void> RunDeactivate(const DeactivateOptions& options, TargetDiscovery& discovery,
                           ProfileClient& client, std::ostream& out) {
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto response = client.Deactivate(*target, memprof::v1::DeactivateRequest());
  if (!response) return Fail(response.error());
  if (options.target.json) {
    out << DeactivationToJson(*response, target->pid).dump(2) << '\n';
  } else {
    out << DescribeDeactivation(*response, target->pid, std::chrono::system_clock::now()) << '\n';
    if (response->capture().held_size() > 0) {
      out << "pid " << target->pid << ": peak capture not armed; "
          << response->capture().held_size()
          << " captures kept (memprofctl dump --captured --out-dir DIR)\n";
    }
  }
  return {};
}

std::string DescribeDeactivation(const memprof::v1::DeactivateResponse& response, pid_t pid,
                                 std::chrono::system_clock::time_point now) {
  const std::string who = "pid " + std::to_string(pid) + ": ";
  constexpr char kKept[] = "; samples collected so far are kept";
  if (!response.previous().active()) return who + "profiling already inactive" + kKept;
  const int64_t end = response.previous().window_end_unix_ms();
  const std::string was =
      end == 0 ? std::string("was active")
               : "was active until " + FormatLocalTime(end) + ", " + FormatRelative(end, now);
  return who + "profiling deactivated (" + was + ")" + kKept;
}

nlohmann::json DeactivationToJson(const memprof::v1::DeactivateResponse& response, pid_t pid) {
  return {{"schema_version", kDeactivateJsonVersion},
          {"pid", pid},
          {"previous", ProfilingStateToJson(response.previous())},
          {"current", ProfilingStateToJson(response.current())},
          {"capture", CaptureStateToJson(response.capture())},
          {"activation_generation", response.activation_generation()}};
}

namespace {

class DeactivateCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterDeactivateCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  Result<void> Run(const CommandContext& context) override { return RunWith(options_, context); }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunWith(ForTarget(options_, target), context);
  }

 private:
  static Result<void> RunWith(const DeactivateOptions& options, const CommandContext& context) {
    return RunDeactivate(options, *context.discovery, *context.client, context.console.out);
  }
  DeactivateOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeDeactivateCommand() { return std::make_unique<DeactivateCommand>(); }

}  // namespace memprof::cli
