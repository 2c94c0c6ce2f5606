#include "cli/app/command_line.h"

#include "cli/commands/option_validators.h"
#include "common/version.h"

namespace memprof::cli {

CommandLine::CommandLine() {
  app.set_version_flag("--version", std::string("memprofctl ") + kVersion);
  app.add_flag("-v,--verbose", verbosity, "More log output on stderr (-vv for debug)");
  app.add_option("--timeout", timeout, "Deadline of each request to an agent (default 10s; for a dump, of the wait until the "
                 "agent starts sending it, which includes waiting for its turn when the agent is "
                 "busy); with several targets, also of all the work for each one")
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

TargetOptions* ParsedTargetOptions(CommandLine& cl) {
  if (cl.status_cmd->parsed()) return &cl.status.target;
  if (cl.activate_cmd->parsed()) return &cl.activate.target;
  if (cl.deactivate_cmd->parsed()) return &cl.deactivate.target;
  if (cl.dump_cmd->parsed()) return &cl.dump.target;
  if (cl.profile_cmd->parsed()) return &cl.profile.target;
  if (cl.stats_cmd->parsed()) return &cl.stats.target;
  return nullptr;
}

}  // namespace memprof::cli
