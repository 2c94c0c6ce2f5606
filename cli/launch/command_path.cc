#include "cli/launch/command_path.h"

#include <sys/stat.h>
#include <unistd.h>

namespace memprof::cli {
namespace {

enum class Candidate { kMissing, kNotExecutable, kExecutable };

Candidate Check(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return Candidate::kMissing;
  return ::access(path.c_str(), X_OK) == 0 ? Candidate::kExecutable : Candidate::kNotExecutable;
}

std::unexpected<Error> NotFound(std::string_view command) {
  return Fail(ErrorCode::kInvalidArgument, "command not found: " + std::string(command));
}

std::unexpected<Error> NotExecutable(std::string_view command, const std::string& path) {
  return Fail(ErrorCode::kPermissionDenied,
              "cannot execute " + std::string(command) + ": " + path + " is not executable");
}

}  // namespace

Result<std::string> ResolveCommandPath(std::string_view command,
                                       std::optional<std::string_view> path_env) {
  if (command.empty()) return NotFound(command);
  if (command.find('/') != std::string_view::npos) {
    const std::string path(command);
    switch (Check(path)) {
      case Candidate::kExecutable:
        return path;
      case Candidate::kNotExecutable:
        return NotExecutable(command, path);
      case Candidate::kMissing:
        return NotFound(command);
    }
  }
  std::string_view dirs = path_env.value_or("/bin:/usr/bin");
  std::optional<std::string> not_executable;
  while (true) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string path = dir + "/" + std::string(command);
    const Candidate c = Check(path);
    if (c == Candidate::kExecutable) return path;
    if (c == Candidate::kNotExecutable && !not_executable) not_executable = path;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  if (not_executable) return NotExecutable(command, *not_executable);
  return NotFound(command);
}

}  // namespace memprof::cli
