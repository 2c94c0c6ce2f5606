#ifndef MEMPROF_CLI_COMMANDS_ATTACH_COMMAND_H_
#define MEMPROF_CLI_COMMANDS_ATTACH_COMMAND_H_

#include <sys/types.h>

#include <memory>

#include "cli/commands/command.h"

namespace memprof::cli {

// `memprofctl attach --pid N [--dry-run] [--json]`: loads the installed
// agent into a process that was started without it, as if it had been
// preloaded, and returns once its socket answers (cli/attach/ does the
// loading). --dry-run says what would work and touches nothing.
struct AttachOptions {
  pid_t pid = 0;
  bool dry_run = false;
  bool json = false;
};

std::unique_ptr<Command> MakeAttachCommand();

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_ATTACH_COMMAND_H_
