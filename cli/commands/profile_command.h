#ifndef MEMPROF_CLI_COMMANDS_PROFILE_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_PROFILE_COMMAND_H_

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include "cli/client/profile_client.h"
#include "cli/collect/profile_window.h"
#include "cli/commands/command.h"
#include "cli/io/console.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_options.h"
#include "common/result.h"

namespace memprof::cli {

// `memprofctl profile --duration D --out FILE [--format F] [--pid N|--name RE]
// [--json]`: activate, wait D, dump, and put the activation state back as it
// was: one command for "what does this process allocate over the next D?".
struct ProfileOptions {
  TargetOptions target;
  std::string duration;         // required, 1s..24h
  std::string out;              // FILE, or - for stdout
  std::string out_dir;          // or DIR: {host}-{pid}-{UTC time}.{extension} in it
  std::string format = "heap";  // as `dump --format`
  bool force = false;           // --force: replace an existing --out FILE
  bool allocations = false;     // --allocations: an allocation profile of the window
  uint64_t record_bound = 0;    // --record-bound: 0 is the agent's default
};

CLI::App* RegisterProfileCommand(CLI::App& app, ProfileOptions& options);

// Validates everything (duration, format, --out, which is probed by creating
// its temp file) before contacting the agent. Then RunProfileWindow
// (collect/profile_window.h): Status; Activate with a window of duration +
// kProfileWindowMargin unless profiling is already active for long enough;
// wait; dump as `dump` does (temp file, size and SHA-256 check, rename);
// restore the state. Errors: the agent's and the dump's; the
// target exiting during the window is kNotFound and writes nothing; an abort
// is kCancelled and writes nothing. The summary goes to console.err, --json
// to console.out.
[[nodiscard]] Result<void> RunProfile(const ProfileOptions& options, TargetDiscovery& discovery,
                                      ProfileClient& client, const Console& console,
                                      const ProfileRuntime& runtime);

// The `profile` command for the registry (command_registry.cc).
std::unique_ptr<Command> MakeProfileCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_PROFILE_COMMAND_H_
