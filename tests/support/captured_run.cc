#include "tests/support/captured_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace memprof::test_support {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// This process's environment with PATH replaced, for execve.
std::vector<std::string> EnvironmentWithPath(const std::string& search_path) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "PATH=", 5) != 0) env.emplace_back(*entry);
  }
  env.push_back("PATH=" + search_path);
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Reads `fd` until EOF or `deadline`; whether EOF came first.
bool ReadUntilEof(int fd, steady_clock::time_point deadline, std::string& output) {
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    output.append(buffer, static_cast<size_t>(n));
  }
}

// Starts argv in a process group of its own with stdout and stderr into
// `out_fd`; its pid, or -1 and `error`.
pid_t Spawn(std::vector<std::string> argv, const std::string& search_path, int out_fd,
            std::string& error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // group 0: a new one
  std::vector<std::string> env = EnvironmentWithPath(search_path);
  pid_t pid = -1;
  const int status = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attributes,
                                   Pointers(argv).data(), Pointers(env).data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (status != 0) error = std::strerror(status);
  return status == 0 ? pid : -1;
}

}  // namespace

CapturedRun RunCaptured(const std::vector<std::string>& argv, const std::string& search_path,
                        std::chrono::seconds timeout) {
  CapturedRun run;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    run.error = std::string("pipe: ") + std::strerror(errno);
    return run;
  }
  const pid_t pid = Spawn(argv, search_path, fds[1], run.error);
  ::close(fds[1]);  // so that EOF comes when the command (and its children) are done
  if (pid > 0) {
    run.timed_out = !ReadUntilEof(fds[0], steady_clock::now() + timeout, run.output);
    if (run.timed_out) ::kill(-pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ::close(fds[0]);
  return run;
}

}  // namespace memprof::test_support
