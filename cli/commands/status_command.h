#ifndef MEMPROF_CLI_COMMANDS_STATUS_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_STATUS_COMMAND_H_

#include <memory>
#include <CLI/CLI.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl status [--pid N] [--json]`: identity of the process and the
// state of its allocator and profiling.
struct StatusOptions {
  TargetOptions target;
};

CLI::App* RegisterStatusCommand(CLI::App& app, StatusOptions& options);

[[nodiscard]] Result<void> RunStatus(const StatusOptions& options, TargetDiscovery& discovery,
                                     ProfileClient& client, std::ostream& out);

// The --json object (keys in the CLI contract; pid is the pid as the CLI sees it).
nlohmann::json StatusToJson(const memprof::v1::StatusResponse& status, const Target& target);

// "key: value" lines for people, plus a hint line when profiling is impossible.
void PrintStatus(const memprof::v1::StatusResponse& status, const Target& target,
                 std::chrono::system_clock::time_point now, std::ostream& out);

// The `status` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeStatusCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_STATUS_COMMAND_H_
