#ifndef MEMPROF_CLI_APP_COMMAND_LINE_H_
#define MEMPROF_CLI_APP_COMMAND_LINE_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>

#include "cli/app/help_text.h"
#include "cli/commands/activate_command.h"
#include "cli/commands/deactivate_command.h"
#include "cli/commands/dump_command.h"
#include "cli/commands/exporter_command.h"
#include "cli/commands/list_command.h"
#include "cli/commands/profile_command.h"
#include "cli/commands/report_command.h"
#include "cli/commands/run_command.h"
#include "cli/commands/stats_command.h"
#include "cli/commands/status_command.h"
#include "cli/targets/target_options.h"

namespace memprof::cli {

// Bounds of the global --timeout.
inline constexpr std::chrono::milliseconds kMinTimeout(100);
inline constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::hours(1);

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

// The target options of the parsed command; nullptr for the commands that
// find their targets themselves (list, exporter) or have none (report, run).
TargetOptions* ParsedTargetOptions(CommandLine& cl);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_COMMAND_LINE_H_
