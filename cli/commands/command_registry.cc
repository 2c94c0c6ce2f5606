#include "cli/commands/command_registry.h"

#include "cli/commands/activate_command.h"
#include "cli/commands/attach_command.h"
#include "cli/commands/deactivate_command.h"
#include "cli/commands/doctor_command.h"
#include "cli/commands/dump_command.h"
#include "cli/commands/exporter_command.h"
#include "cli/commands/list_command.h"
#include "cli/commands/profile_command.h"
#include "cli/commands/purge_command.h"
#include "cli/commands/report_command.h"
#include "cli/commands/run_command.h"
#include "cli/commands/stats_command.h"
#include "cli/commands/status_command.h"

namespace memprof::cli {

std::vector<std::unique_ptr<Command>> MakeCommands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(MakeListCommand());
  commands.push_back(MakeStatusCommand());
  commands.push_back(MakeActivateCommand());
  commands.push_back(MakeDeactivateCommand());
  commands.push_back(MakeDumpCommand());
  commands.push_back(MakeProfileCommand());
  commands.push_back(MakeStatsCommand());
  commands.push_back(MakeDoctorCommand());
  commands.push_back(MakePurgeCommand());
  commands.push_back(MakeExporterCommand());
  commands.push_back(MakeReportCommand());
  commands.push_back(MakeRunCommand());
  commands.push_back(MakeAttachCommand());
  return commands;
}

}  // namespace memprof::cli
