#ifndef MEMPROF_CLI_COMMANDS_DOCTOR_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_DOCTOR_COMMAND_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl doctor [--pid N] [--json]`: where a process's memory is (RSS
// by kind of mapping, the allocator's own figures, the ratios that matter)
// and findings with advice in the allocator's terms.
struct DoctorOptions {
  TargetOptions target;
};

CLI::App* RegisterDoctorCommand(CLI::App& app, DoctorOptions& options);

// Reads the agent's Stats over kDoctorWatch (ended early by `stop`), then
// /proc/<pid>/smaps under `proc_root`.
[[nodiscard]] Result<void> RunDoctor(const DoctorOptions& options, TargetDiscovery& discovery,
                                     ProfileClient& client, const std::string& proc_root,
                                     std::ostream& out, std::stop_token stop = {});

// The `doctor` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeDoctorCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_DOCTOR_COMMAND_H_
