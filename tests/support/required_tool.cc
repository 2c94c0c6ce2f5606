#include "tests/support/required_tool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "tests/support/command_runner.h"

namespace memprof::test_support {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";
constexpr size_t kOutputTail = 1500;  // of a failed probe's output, for the message

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string Join(const std::vector<std::string>& words, const char* separator) {
  std::string joined;
  for (const std::string& word : words) joined += (joined.empty() ? "" : separator) + word;
  return joined;
}

std::string Tail(const std::string& text) {
  return text.size() <= kOutputTail ? text : "..." + text.substr(text.size() - kOutputTail);
}

// The advice every message ends with.
std::string InstallAdvice(const RequiredTool& tool, bool reinstall) {
  const bool several = tool.package.find(' ') != std::string::npos;
  std::string advice =
      std::string(several ? " Install the Debian packages " : " Install the Debian package ") +
      tool.package + ": apt-get install " + (reinstall ? "--reinstall " : "") + tool.package;
  if (!tool.note.empty()) advice += ", " + tool.note;
  return advice + " (bash dev.sh deps installs everything the tests need).";
}

std::string NotFound(const RequiredTool& tool, const std::string& search_path) {
  const std::string where =
      tool.candidates.empty()
          ? ""
          : ": looked for " + Join(tool.candidates, ", ") + " (PATH=" + search_path + ")";
  return tool.name + " is not installed" + where + "." + InstallAdvice(tool, false);
}

std::string ProbeFailed(const RequiredTool& tool, const std::vector<std::string>& argv,
                        const CommandResult& run) {
  std::ostringstream what;
  what << tool.name << " is installed but cannot run: `" << Join(argv, " ") << "` ";
  if (run.spawn_failed) {
    what << "could not start (" << run.err << ").";
  } else if (run.timed_out) {
    what << "did not finish within " << tool.probe_timeout.count() << " s.";
  } else if (run.exit_code != 0) {
    what << "exited with status " << run.exit_code << ".";
  } else {
    what << "did not print \"" << tool.probe_expects << "\".";
  }
  what << " Its output:\n" << Tail(run.out + run.err) << "\n" << InstallAdvice(tool, true);
  return what.str();
}

// Checks one program (not its helpers): found, and its probe succeeds.
ToolCheck CheckProgram(const RequiredTool& tool, const std::string& search_path) {
  ToolCheck check;
  check.path = FindProgram(tool.candidates, search_path);
  if (check.path.empty()) {
    check.problem = NotFound(tool, search_path);
    return check;
  }
  std::vector<std::string> argv = {check.path};
  argv.insert(argv.end(), tool.probe_args.begin(), tool.probe_args.end());
  // PATH is search_path for the probe's own children too.
  const CommandResult run = RunCommandUnchecked(argv, {{"PATH", search_path}}, tool.probe_timeout);
  const bool ok = !run.spawn_failed && !run.timed_out && run.exit_code == 0 &&
                  (run.out + run.err).find(tool.probe_expects) != std::string::npos;
  if (!ok) {
    check.problem = ProbeFailed(tool, argv, run);
    check.path.clear();
  }
  return check;
}

}  // namespace

std::string CurrentPath() {
  const char* path = std::getenv("PATH");
  return path != nullptr && *path != '\0' ? path : kDefaultPath;
}

std::string FindProgram(const std::vector<std::string>& candidates,
                        const std::string& search_path) {
  for (const std::string& candidate : candidates) {
    if (candidate.find('/') != std::string::npos) {
      if (IsExecutableFile(candidate)) return candidate;
      continue;
    }
    std::istringstream dirs(search_path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const std::string path = (dir.empty() ? "." : dir) + "/" + candidate;
      if (IsExecutableFile(path)) return path;
    }
  }
  return "";
}

ToolCheck CheckTool(const RequiredTool& tool, const std::string& search_path) {
  for (const RequiredTool& helper : tool.helpers) {
    if (ToolCheck check = CheckProgram(helper, search_path); !check.ok()) {
      return {"", tool.name + " cannot run: it needs " + helper.name + " (" + helper.why +
                      "), and " + check.problem};
    }
  }
  return CheckProgram(tool, search_path);
}

::testing::AssertionResult CanRun(const RequiredTool& tool, std::string* path) {
  static std::mutex mutex;
  static std::map<std::string, ToolCheck> checked;  // by tool name and PATH
  std::lock_guard<std::mutex> lock(mutex);
  const std::string search_path = CurrentPath();
  const std::string key = tool.name + "\n" + search_path;
  auto it = checked.find(key);
  if (it == checked.end()) it = checked.emplace(key, CheckTool(tool, search_path)).first;
  if (path != nullptr) *path = it->second.path;
  if (it->second.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << it->second.problem;
}

}  // namespace memprof::test_support
