#ifndef MEMPROF_CLI_LAUNCH_COMMAND_PATH_H_
#define MEMPROF_CLI_LAUNCH_COMMAND_PATH_H_

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof::cli {

// Finds the file execvp() would run for `command`: a name containing '/' is
// used as is; otherwise each directory of `path_env` is tried in order (an
// empty entry means the current directory; no PATH means "/bin:/usr/bin").
// kInvalidArgument "command not found: X" when nothing matches;
// kPermissionDenied when only non-executable files match.
[[nodiscard]] Result<std::string> ResolveCommandPath(std::string_view command,
                                                     std::optional<std::string_view> path_env);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_LAUNCH_COMMAND_PATH_H_
