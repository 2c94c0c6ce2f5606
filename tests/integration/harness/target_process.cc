#include "tests/integration/harness/target_process.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>
#include <string_view>

#include "common/text_file.h"
#include "common/unix_socket.h"
#include "tests/integration/harness/support_names.h"

namespace memprof::integration {
namespace {

std::string Describe(Subprocess& proc) {
  std::string out = JoinArgv(proc.argv()) + " (pid " + std::to_string(proc.pid()) + ")";
  // A child that closed its pipes is usually about to exit: give it a moment
  // so the message can say how it ended.
  if (std::optional<ExitStatus> st = proc.Wait(std::chrono::milliseconds(500))) {
    out += st->term_signal != 0 ? " was killed by signal " + std::to_string(st->term_signal)
                                : " exited with code " + std::to_string(st->exit_code);
  } else {
    out += " is still running";
  }
  return out + "\n--- stdout ---\n" + proc.StdoutText() + "\n--- stderr ---\n" +
         proc.StderrText();
}

}  // namespace

bool SocketAccepts(const std::string& path) {
  return ConnectUnixSocket(path, std::chrono::milliseconds(500)).has_value();
}

bool IsSocketFile(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::vector<std::string> DescriptorTargetsOfAllThreads(pid_t pid) {
  namespace fs = std::filesystem;
  std::vector<std::string> targets;
  std::set<std::string> tables;  // threads that share a table list it once
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::vector<std::string> table;
    for (const auto& fd : fs::directory_iterator(task.path() / "fd", ec)) {
      std::error_code link_ec;
      table.push_back(fd.path().filename().string() + " " +
                      fs::read_symlink(fd.path(), link_ec).string());
    }
    std::sort(table.begin(), table.end());
    std::string key;
    for (const auto& entry : table) key += entry + "\n";
    if (!tables.insert(key).second) continue;
    for (const auto& entry : table) targets.push_back(entry.substr(entry.find(' ') + 1));
  }
  return targets;
}

Result<std::unique_ptr<TargetProcess>> TargetProcess::Start(const TargetOptions& options) {
  SpawnOptions spawn{options.argv, options.env, kReadyFd, options.stdin_pipe};
  spawn.env["MEMPROF_SOCKET_DIR"] = options.socket_dir;
  auto proc = Subprocess::Spawn(spawn);
  if (!proc) return Fail(proc.error());
  std::unique_ptr<TargetProcess> target(new TargetProcess());
  target->process_ = std::move(*proc);
  target->socket_path_ = options.socket_dir + "/" + std::to_string(target->pid()) + ".sock";

  auto line = target->process_->WaitForReadyLine(options.ready_timeout);
  if (!line || *line != "ready") {
    std::string why = line ? "unexpected readiness line '" + *line + "'" : line.error().message;
    return Fail(ErrorCode::kUnavailable,
                "target never became ready: " + why + "\n" + Describe(*target->process_));
  }
  if (options.await_handshake_closed) {
    if (auto closed = target->process_->WaitForReadyPipeClosed(options.ready_timeout); !closed) {
      return Fail(ErrorCode::kUnavailable,
                  closed.error().message + "\n" + Describe(*target->process_));
    }
  }
  if (options.expect_agent) {
    auto ok = target->AwaitSocket(options.socket_timeout, options.connect_to_agent);
    if (!ok) return Fail(ok.error());
  }
  return target;
}

Result<void> TargetProcess::AwaitSocket(std::chrono::milliseconds timeout, bool connect) {
  bool exited = false;
  bool up = WaitUntil(
      [&] {
        if (process_->HasExited()) {
          exited = true;
          return true;
        }
        return connect ? SocketAccepts(socket_path_) : IsSocketFile(socket_path_);
      },
      timeout);
  if (up && !exited) return {};
  return Fail(ErrorCode::kUnavailable,
              "agent socket " + socket_path_ +
                  (connect ? " did not accept connections" : " did not appear") + " within " +
                  std::to_string(timeout.count()) + " ms\n" + Describe(*process_));
}

std::optional<ExitStatus> TargetProcess::Terminate(std::chrono::milliseconds timeout) {
  process_->Signal(SIGTERM);
  return process_->Wait(timeout);
}

Result<ProcStatus> TargetProcess::ReadProcStatus() const {
  auto text = ReadTextFile("/proc/" + std::to_string(pid()) + "/status");
  if (!text) return Fail(text.error());
  return ParseProcStatus(*text);
}

uint64_t TargetProcess::ProcStatusKb(const std::string& field) const {
  auto text = ReadTextFile("/proc/" + std::to_string(pid()) + "/status");
  if (!text) return 0;
  std::string_view s = *text;
  size_t pos = s.find("\n" + field + ":");
  if (pos == std::string_view::npos) return 0;
  s.remove_prefix(pos + field.size() + 2);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  uint64_t kb = 0;
  std::from_chars(s.data(), s.data() + s.size(), kb);
  return kb;
}

}  // namespace memprof::integration
