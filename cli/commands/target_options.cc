#include "cli/commands/target_options.h"

#include "cli/option_validators.h"

namespace memprof::cli {

CLI::Option* AddPidOption(CLI::App& command, TargetOptions& options) {
  CLI::Option* pid =
      command
          .add_option("--pid", options.pid,
                      "Process to talk to (default: $MEMPROF_PID, else the only process with an "
                      "agent)")
          ->envname("MEMPROF_PID")
          ->check(PidValidator())
          ->type_name("N");
  command
      .add_option("--name", options.name,
                  "The only process with an agent whose command name or line matches this "
                  "regular expression (ECMAScript, searched anywhere)")
      ->type_name("REGEX")
      ->excludes(pid);
  return pid;
}

CLI::Option* AddJsonFlag(CLI::App& command, bool& json) {
  return command.add_flag("--json", json, "Machine-readable output (snake_case keys, fixed types)");
}

}  // namespace memprof::cli
