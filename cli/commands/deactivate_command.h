#ifndef MEMPROF_CLI_COMMANDS_DEACTIVATE_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_DEACTIVATE_COMMAND_H_

#include <memory>
#include <CLI/CLI.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl deactivate [--pid N] [--json]`: stop sampling; samples
// collected so far stay in the profile.
struct DeactivateOptions {
  TargetOptions target;
};

CLI::App* RegisterDeactivateCommand(CLI::App& app, DeactivateOptions& options);

[[nodiscard]] Result<void> RunDeactivate(const DeactivateOptions& options,
                                         TargetDiscovery& discovery, ProfileClient& client,
                                         std::ostream& out);

// "pid 1234: profiling deactivated (was active); samples collected so far are kept".
std::string DescribeDeactivation(const memprof::v1::DeactivateResponse& response, pid_t pid,
                                 std::chrono::system_clock::time_point now);

nlohmann::json DeactivationToJson(const memprof::v1::DeactivateResponse& response, pid_t pid);

// The `deactivate` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeDeactivateCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_DEACTIVATE_COMMAND_H_
