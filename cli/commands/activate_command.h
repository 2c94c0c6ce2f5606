#ifndef MEMPROF_CLI_COMMANDS_ACTIVATE_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_ACTIVATE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/commands/target_options.h"
#include "cli/profile_client.h"
#include "cli/target_discovery.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl activate [--pid N] [--for DURATION] [--json]`: start sampling
// allocations, optionally for a window the agent closes by itself.
struct ActivateOptions {
  TargetOptions target;
  std::string duration;  // --for; empty: until deactivated
};

CLI::App* RegisterActivateCommand(CLI::App& app, ActivateOptions& options);

// A bad --for fails with kInvalidArgument before anything is contacted.
[[nodiscard]] Result<void> RunActivate(const ActivateOptions& options, TargetDiscovery& discovery,
                                       ProfileClient& client, std::ostream& out);

// "pid 1234: profiling activated (was inactive), until ... (in 5m)" and variants.
std::string DescribeActivation(const memprof::v1::ActivateResponse& response, pid_t pid,
                               std::chrono::system_clock::time_point now);

nlohmann::json ActivationToJson(const memprof::v1::ActivateResponse& response, pid_t pid);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_ACTIVATE_COMMAND_H_
