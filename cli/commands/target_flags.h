#ifndef MEMPROF_CLI_COMMANDS_TARGET_FLAGS_H_
#define MEMPROF_CLI_COMMANDS_TARGET_FLAGS_H_

#include <CLI/CLI.hpp>

#include "cli/io/atomic_file_writer.h"
#include "cli/targets/target_options.h"

namespace memprof::cli {

// Adds the target selection options (--pid, --name, --all, --targets,
// --target, --tls-ca/--tls-cert/--tls-key, --parallel) to `command`.
CLI::Option* AddPidOption(CLI::App& command, TargetOptions& options);

// Adds --json to `command`.
CLI::Option* AddJsonFlag(CLI::App& command, bool& json);

// Adds --force to `command`: `out` (-o/--out FILE) may then replace an
// existing file, which without it is a usage error that leaves the file as
// it was (generated names, --out-dir, never replace anything).
CLI::Option* AddForceFlag(CLI::App& command, bool& force, CLI::Option* out);

// What --force means for the output file.
inline ExistingFile ExistingFileFor(bool force) {
  return force ? ExistingFile::kReplace : ExistingFile::kRefuse;
}

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COMMANDS_TARGET_FLAGS_H_
