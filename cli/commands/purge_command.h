#ifndef MEMPROF_CLI_COMMANDS_PURGE_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_PURGE_COMMAND_H_

#include <memory>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/client/profile_client.h"
#include "cli/commands/command.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl purge [--pid N] [--json]`: makes the allocator give its unused
// pages back to the OS now (jemalloc: every arena purged; glibc:
// malloc_trim(0)) and shows RSS and the allocator's figures before and after.
struct PurgeOptions {
  TargetOptions target;
};

CLI::App* RegisterPurgeCommand(CLI::App& app, PurgeOptions& options);

[[nodiscard]] Result<void> RunPurge(const PurgeOptions& options, TargetDiscovery& discovery,
                                    ProfileClient& client, std::ostream& out);

// The --json object: before/after readings and the signed change of RSS.
nlohmann::json PurgeToJson(const memprof::v1::PurgeResponse& purge, const Target& target);

// A before/after/change table for people.
void PrintPurge(const memprof::v1::PurgeResponse& purge, const Target& target, std::ostream& out);

// The `purge` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakePurgeCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_PURGE_COMMAND_H_
