#ifndef MEMPROF_CLI_APP_MULTI_TARGET_DISPATCH_H_
#define MEMPROF_CLI_APP_MULTI_TARGET_DISPATCH_H_

#include "cli/commands/command.h"
#include "cli/targets/target_options.h"
#include "cli/targets/target_selection.h"
#include "common/result.h"

namespace memprof::cli {

// Runs `command` on every target of a multi-target selection
// (Command::RunOnMany): first its usage errors (Command::CheckManyTargets),
// then each target with --timeout plus the command's extra time
// (Command::ExtraTimePerTarget) for all its work, `options.parallel` at once.
[[nodiscard]] Result<void> RunOnSelectedTargets(const Command& command,
                                                const TargetSelection& selection,
                                                const TargetOptions& options,
                                                const CommandContext& context);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_APP_MULTI_TARGET_DISPATCH_H_
