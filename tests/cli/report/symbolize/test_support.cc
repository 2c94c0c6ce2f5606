#include "tests/cli/report/symbolize/test_support.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

extern char** environ;

namespace memprof::symbolize::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> Argv(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// Spawns `args` with stdout (and, if stdin_fd is set, stdin) on new pipes.
pid_t Spawn(const std::vector<std::string>& args, int* stdout_fd, int* stdin_fd) {
  int out[2];
  int in[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0) return -1;
  if (stdin_fd != nullptr && ::pipe2(in, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  if (stdin_fd != nullptr) posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  pid_t pid = -1;
  std::vector<char*> argv = Argv(args);
  if (posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  *stdout_fd = out[0];
  if (stdin_fd != nullptr) {
    ::close(in[0]);
    *stdin_fd = in[1];
  }
  return pid;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv) {
  CommandResult result;
  int out = -1;
  const pid_t pid = Spawn(argv, &out, nullptr);
  char buffer[4096];
  for (ssize_t n; out >= 0 && (n = ::read(out, buffer, sizeof(buffer))) != 0;) {
    if (n > 0) result.output.append(buffer, static_cast<size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  if (out >= 0) ::close(out);
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

FixtureProcess::FixtureProcess(const std::string& executable, std::chrono::milliseconds deadline) {
  pid_ = Spawn({executable}, &stdout_fd_, &stdin_fd_);
  if (pid_ <= 0) {
    error_ = "cannot start " + executable;
    return;
  }
  ReadUntilReady(deadline);
}

FixtureProcess::~FixtureProcess() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);  // EOF: the fixture exits
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  if (pid_ <= 0) return;
  const auto give_up = Clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() > give_up) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      return;
    }
    ::poll(nullptr, 0, 10);  // the child is exiting; wait for it without spinning
  }
}

void FixtureProcess::ReadUntilReady(std::chrono::milliseconds deadline) {
  const auto give_up = Clock::now() + deadline;
  std::string pending;
  char buffer[4096];
  while (!ready_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now());
    pollfd pfd{stdout_fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
      error_ = "fixture not ready before the deadline";
      return;
    }
    const ssize_t n = ::read(stdout_fd_, buffer, sizeof(buffer));
    if (n <= 0) {
      error_ = "fixture exited before it was ready";
      return;
    }
    pending.append(buffer, static_cast<size_t>(n));
    for (size_t eol; !ready_ && (eol = pending.find('\n')) != std::string::npos;) {
      HandleLine(pending.substr(0, eol));
      pending.erase(0, eol + 1);
    }
  }
}

void FixtureProcess::HandleLine(const std::string& line) {
  if (line == "ready") {
    ready_ = true;
  } else if (line.starts_with("map ")) {
    maps_.push_back(line.substr(4));
  } else if (const size_t space = line.find(' '); space != std::string::npos) {
    addresses_[line.substr(0, space)] = std::stoull(line.substr(space + 1), nullptr, 16);
  }
}

uint64_t FixtureProcess::Address(const std::string& name) const {
  auto it = addresses_.find(name);
  return it == addresses_.end() ? 0 : it->second;
}

int MarkerLine(const std::string& source, const std::string& marker) {
  std::ifstream in(source);
  const std::string needle = "// LINE:" + marker;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.ends_with(needle)) return number;
  }
  return 0;
}

}  // namespace memprof::symbolize::testing
