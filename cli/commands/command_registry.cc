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

namespace {

constexpr CommandEntry kCommands[] = {
    {"list", MakeListCommand},         {"status", MakeStatusCommand},
    {"activate", MakeActivateCommand}, {"deactivate", MakeDeactivateCommand},
    {"dump", MakeDumpCommand},         {"profile", MakeProfileCommand},
    {"stats", MakeStatsCommand},       {"doctor", MakeDoctorCommand},
    {"purge", MakePurgeCommand},       {"exporter", MakeExporterCommand},
    {"report", MakeReportCommand},     {"run", MakeRunCommand},
    {"attach", MakeAttachCommand},
};

}  // namespace

std::span<const CommandEntry> CommandTable() { return kCommands; }

std::vector<std::unique_ptr<Command>> MakeCommands() {
  std::vector<std::unique_ptr<Command>> commands;
  for (const CommandEntry& entry : kCommands) commands.push_back(entry.make());
  return commands;
}

}  // namespace memprof::cli
