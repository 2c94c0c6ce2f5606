#ifndef MEMPROF_CLI_APP_MULTI_TARGET_DISPATCH_H_
#define MEMPROF_CLI_APP_MULTI_TARGET_DISPATCH_H_

#include <chrono>

#include "cli/app/cli_app.h"
#include "cli/app/command_line.h"
#include "cli/io/console.h"
#include "cli/io/interrupt_watcher.h"
#include "cli/targets/target_discovery.h"
#include "cli/targets/target_selection.h"
#include "common/result.h"

namespace memprof::cli {

// Runs the parsed target command on every target of a multi-target
// selection (RunOnTargets): each worker gets a copy of the command's options
// naming its target. What only works on one target (dump --out FILE or
// --every, profile --out FILE, stats --watch) is a usage error first. For
// `profile`, the first SIGINT/SIGTERM ends every window early and the second
// aborts; for the others the first cancels the run.
[[nodiscard]] Result<void> RunOnSelectedTargets(const CommandLine& cl, const CliEnvironment& env,
                                                const TargetSelection& selection,
                                                const TargetOptions& options,
                                                TargetDiscovery& discovery, const Console& console,
                                                const InterruptWatcher* watcher,
                                                std::chrono::milliseconds timeout);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_MULTI_TARGET_DISPATCH_H_
