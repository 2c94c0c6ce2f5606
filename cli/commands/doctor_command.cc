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
      "figures from the agent; and lists findings with advice. Local processes only.\n"
      "Examples:\n"
      "  memprofctl doctor --pid 1234\n"
      "  memprofctl doctor --pid 1234 --json | jq '.findings[].id'\n");
  return cmd;
}

Result<void> RunDoctor(const DoctorOptions& options, TargetDiscovery& discovery,
                       ProfileClient& client, const std::string& proc_root, std::ostream& out) {
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto figures = CollectDoctorFigures(*target, client, proc_root);
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
  Result<void> Run(const CommandContext& context) override {
    return RunDoctor(options_, *context.discovery, *context.client, context.env.proc_root,
                     context.console.out);
  }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunDoctor(ForTarget(options_, target), *context.discovery, *context.client,
                     context.env.proc_root, context.console.out);
  }

 private:
  DoctorOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeDoctorCommand() { return std::make_unique<DoctorCommand>(); }

}  // namespace memprof::cli
