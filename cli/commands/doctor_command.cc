#include "cli/commands/doctor_command.h"

#include "cli/commands/target_flags.h"
#include "cli/doctor/doctor_collector.h"
#include "cli/doctor/doctor_findings.h"
#include "cli/doctor/doctor_report.h"

namespace memprof::cli {

CLI::App* RegisterDoctorCommand(CLI::App& app, DoctorOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Show where a process's memory is, and what to do about it");
  AddPidOption(*cmd, options.target);
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(
      "Splits RSS (/proc/<pid>/smaps) into allocator memory, thread stacks, binaries,\n"
      "other files, shared memory and other anonymous memory; reads the allocator's own\n"
      "figures from the agent (jemalloc, glibc malloc, tcmalloc), three times over 2s\n"
      "to see whether the heap grows; and lists findings with advice.\n"
      "Local processes only.\n"
      "Examples:\n"
      "  memprofctl doctor --pid 1234\n"
      "  memprofctl doctor --pid 1234 --json | jq '.findings[].id'\n");
  return cmd;
}

Result<void> RunDoctor(const DoctorOptions& options, TargetDiscovery& discovery,
                       ProfileClient& client, const std::string& proc_root, std::ostream& out,
                       std::stop_token stop) {
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto figures =
      CollectDoctorFigures(*target, client, proc_root, GrowthWatch{kDoctorWatch, std::move(stop)});
  if (!figures) return Fail(figures.error());
  const std::vector<Finding> findings = Diagnose(*figures);
  if (options.target.json) {
    out << DoctorReportToJson(*figures, findings).dump(2) << '\n';
  } else {
    PrintDoctorReport(*figures, findings, out);
  }
  return {};
}

namespace {

class DoctorCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterDoctorCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  Result<void> Run(const CommandContext& context) override { return RunWith(options_, context); }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunWith(ForTarget(options_, target), context);
  }
  // Each target's heap is watched on top of its calls.
  Result<std::chrono::milliseconds> ExtraTimePerTarget() const override { return kDoctorWatch; }

 private:
  static Result<void> RunWith(const DoctorOptions& options, const CommandContext& context) {
    return RunDoctor(options, *context.discovery, *context.client, context.env.proc_root,
                     context.console.out, context.cancel);
  }
  DoctorOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeDoctorCommand() { return std::make_unique<DoctorCommand>(); }

}  // namespace memprof::cli
