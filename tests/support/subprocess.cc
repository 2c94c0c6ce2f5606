#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string_view>

extern char** environ;

namespace memprof::test_support {
namespace {

// Child-side descriptors are moved to numbers >= this so that dup2() onto
// 0/1/2/ready_fd never clobbers one of them.
constexpr int kFirstSafeFd = 64;

Error Errno(const std::string& what) {
  return Error(ErrorCode::kInternal, what + ": " + std::strerror(errno));
}

// A pipe whose both ends are close-on-exec and numbered >= kFirstSafeFd.
Result<std::pair<Fd, Fd>> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Fail(Errno("pipe2"));
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, kFirstSafeFd);
    if (moved < 0) return Fail(Errno("fcntl(F_DUPFD_CLOEXEC)"));
    end.Reset(moved);
  }
  return std::make_pair(std::move(ends[0]), std::move(ends[1]));
}

// A stream socket pair for a child's stdin, moved like MakePipe's ends: the
// test writes with send(MSG_NOSIGNAL), so a child that died never raises
// SIGPIPE in the test. first: the child's end, second: the test's.
Result<std::pair<Fd, Fd>> MakeStdinSocket() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Fail(Errno("socketpair"));
  }
  Fd ends[2] = {Fd(fds[0]), Fd(fds[1])};
  for (Fd& end : ends) {
    int moved = ::fcntl(end.get(), F_DUPFD_CLOEXEC, kFirstSafeFd);
    if (moved < 0) return Fail(Errno("fcntl(F_DUPFD_CLOEXEC)"));
    end.Reset(moved);
  }
  ::shutdown(ends[0].get(), SHUT_WR);  // the child only reads its stdin
  return std::make_pair(std::move(ends[0]), std::move(ends[1]));
}

// memprofctl's own settings (MEMPROFCTL_*, and its config file under
// XDG_CONFIG_HOME) are scrubbed too, like kScrubbedEnvPrefixes. Its cache
// (XDG_CACHE_HOME: plain copies of debug files) is the build tree's, not
// the home directory of whoever runs the tests.
constexpr const char* kScrubbedSettingsPrefixes[] = {"MEMPROFCTL_",
                                                     "XDG_CONFIG_HOME=", "XDG_CACHE_HOME="};

bool IsScrubbed(std::string_view entry) {
  for (std::string_view prefix : kScrubbedEnvPrefixes) {
    if (entry.starts_with(prefix)) return true;
  }
  for (std::string_view prefix : kScrubbedSettingsPrefixes) {
    if (entry.starts_with(prefix)) return true;
  }
  return false;
}

std::vector<std::string> BuildEnvironment(const SpawnOptions& options) {
  std::map<std::string, std::string> env = options.env;
  if (options.ready_fd >= 0) env["MEMPROF_TEST_READY_FD"] = std::to_string(options.ready_fd);
  env.try_emplace("XDG_CACHE_HOME", MEMPROF_TEST_CACHE_HOME);
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    if (IsScrubbed(entry) || env.contains(std::string(key))) continue;
    out.emplace_back(entry);
  }
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Everything the forked child needs, prepared before fork() so that the child
// only makes async-signal-safe calls.
struct ChildSetup {
  pid_t parent = 0;
  int stdin_fd = -1;  // /dev/null or the child's end of the stdin socket
  int out_fd = -1;
  int err_fd = -1;
  int ready_fd = -1;         // child end of the handshake pipe, or -1
  int ready_fd_number = -1;  // where the child expects it
  int exec_error_fd = -1;
  char** argv = nullptr;
  char** envp = nullptr;
};

[[noreturn]] void ChildExec(const ChildSetup& s) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != s.parent) ::_exit(127);  // the test died before prctl
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) {
    ::signal(sig, SIG_DFL);
  }
  ::dup2(s.stdin_fd, STDIN_FILENO);
  ::dup2(s.out_fd, STDOUT_FILENO);
  ::dup2(s.err_fd, STDERR_FILENO);
  if (s.ready_fd >= 0) {
    ::dup2(s.ready_fd, s.ready_fd_number);
    ::close_range(3, static_cast<unsigned>(s.ready_fd_number - 1), CLOSE_RANGE_CLOEXEC);
    ::close_range(static_cast<unsigned>(s.ready_fd_number + 1), UINT_MAX, CLOSE_RANGE_CLOEXEC);
  } else {
    ::close_range(3, UINT_MAX, CLOSE_RANGE_CLOEXEC);
  }
  ::execve(s.argv[0], s.argv, s.envp);
  int err = errno;
  [[maybe_unused]] ssize_t n = ::write(s.exec_error_fd, &err, sizeof(err));
  ::_exit(127);
}

ExitStatus ToExitStatus(int wait_status, const rusage& usage) {
  ExitStatus st;
  if (WIFEXITED(wait_status)) st.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) st.term_signal = WTERMSIG(wait_status);
  st.max_rss_kb = usage.ru_maxrss;
  return st;
}

// The child's execve() errno, or 0 once it succeeded: the pipe is CLOEXEC,
// so a successful exec closes it without a word.
int ReadExecError(int fd) {
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(fd, &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  return n > 0 ? exec_errno : 0;
}

}  // namespace

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    bool quote = arg.empty() || arg.find_first_of(" \t'\"$") != std::string::npos;
    out += quote ? "'" + arg + "'" : arg;
  }
  return out;
}

Result<std::unique_ptr<Subprocess>> Subprocess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "empty argv");
  std::vector<std::string> argv_storage = options.argv;
  std::vector<std::string> env_storage = BuildEnvironment(options);
  std::vector<char*> argv = CStrings(argv_storage);
  std::vector<char*> envp = CStrings(env_storage);

  Fd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_fd) return Fail(Errno("open /dev/null"));
  auto out = MakePipe();
  auto err = MakePipe();
  auto exec_error = MakePipe();
  auto wake = MakePipe();
  if (!out || !err || !exec_error || !wake) return Fail(ErrorCode::kInternal, "cannot create pipes");
  std::optional<std::pair<Fd, Fd>> stdin_socket;
  if (options.stdin_pipe) {
    auto made = MakeStdinSocket();
    if (!made) return Fail(made.error());
    stdin_socket = std::move(*made);
  }
  std::optional<std::pair<Fd, Fd>> ready;
  if (options.ready_fd >= 0) {
    if (options.ready_fd < 3 || options.ready_fd >= kFirstSafeFd) {
      return Fail(ErrorCode::kInvalidArgument, "ready_fd must be in [3, 64)");
    }
    auto made = MakePipe();
    if (!made) return Fail(made.error());
    ready = std::move(*made);
  }

  ChildSetup setup{::getpid(),
                   stdin_socket ? stdin_socket->first.get() : null_fd.get(),
                   out->second.get(),
                   err->second.get(),
                   ready ? ready->second.get() : -1,
                   options.ready_fd,
                   exec_error->second.get(),
                   argv.data(),
                   envp.data()};
  pid_t pid = ::fork();
  if (pid < 0) return Fail(Errno("fork"));
  if (pid == 0) ChildExec(setup);

  std::unique_ptr<Subprocess> proc(new Subprocess());
  proc->pid_ = pid;
  proc->argv_ = options.argv;
  // Our copies of the child's ends must go, or we would never see EOF.
  out->second.Reset();
  err->second.Reset();
  exec_error->second.Reset();
  if (ready) {
    ready->second.Reset();
    proc->ready_read_ = std::move(ready->first);
  }
  if (stdin_socket) {
    stdin_socket->first.Reset();
    proc->stdin_write_ = std::move(stdin_socket->second);
  }
  // Both ends of the wake pipe stay with the object until the reader has
  // been joined, so waking it can never raise SIGPIPE.
  proc->wake_read_ = std::move(wake->first);
  proc->wake_write_ = std::move(wake->second);
  proc->reader_ = std::thread([p = proc.get(), o = std::move(out->first), e = std::move(err->first),
                               w = proc->wake_read_.get()]() mutable {
    p->ReaderLoop(o.get(), e.get(), w);
  });

  if (int exec_errno = ReadExecError(exec_error->first.get()); exec_errno != 0) {
    proc->KillAndReap();
    return Fail(ErrorCode::kNotFound,
                "cannot execute " + options.argv[0] + ": " + std::strerror(exec_errno));
  }
  return proc;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) KillAndReap();
  StopReader();
}

void Subprocess::ReaderLoop(int out_fd, int err_fd, int wake_fd) {
  std::array<pollfd, 3> fds = {pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0},
                               pollfd{wake_fd, POLLIN, 0}};
  std::string* sinks[2] = {&stdout_, &stderr_};
  std::vector<char> buf(1 << 16);
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents != 0) break;  // asked to stop
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;  // EOF (the Fd owner in the thread lambda closes it)
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      sinks[i]->append(buf.data(), static_cast<size_t>(n));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  output_eof_ = true;
  eof_cv_.notify_all();
}

void Subprocess::StopReader() {
  if (!reader_.joinable()) return;
  char byte = 0;
  [[maybe_unused]] ssize_t n = ::write(wake_write_.get(), &byte, 1);
  reader_.join();
}

bool Subprocess::WaitForOutputEof(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return eof_cv_.wait_until(lock, deadline, [this] { return output_eof_; });
}

bool Subprocess::TryReap(int flags) {
  if (status_) return true;
  while (true) {
    int wait_status = 0;
    rusage usage{};
    pid_t r = ::wait4(pid_, &wait_status, flags, &usage);
    if (r == pid_) {
      status_ = ToExitStatus(wait_status, usage);
      return true;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {  // ECHILD: somebody else reaped it; nothing more to learn
      status_ = ExitStatus{};
      return true;
    }
    return false;
  }
}

bool Subprocess::HasExited() { return TryReap(WNOHANG); }

std::optional<ExitStatus> Subprocess::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto interval = std::chrono::milliseconds(1);
  while (!TryReap(WNOHANG)) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(interval);
    interval = std::min(interval * 2, std::chrono::milliseconds(10));
  }
  WaitForOutputEof(std::max(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1)));
  return status_;
}

void Subprocess::Signal(int sig) {
  if (!status_) ::kill(pid_, sig);
}

bool Subprocess::WriteStdin(const std::string& data) {
  if (!stdin_write_) return false;
  std::string_view rest = data;
  while (!rest.empty()) {
    ssize_t n = ::send(stdin_write_.get(), rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    rest.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Subprocess::CloseStdin() { stdin_write_.Reset(); }

ExitStatus Subprocess::KillAndReap() {
  if (!status_) {
    ::kill(-pid_, SIGKILL);  // the child leads its own process group
    ::kill(pid_, SIGKILL);
    TryReap(0);
  }
  return *status_;
}

Result<Subprocess::PipeRead> Subprocess::ReadReadyPipe(
    std::chrono::steady_clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return PipeRead::kTimeout;
    pollfd pfd{ready_read_.get(), POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno != EINTR) return Fail(Errno("poll"));
    if (rc <= 0) continue;
    char buf[256];
    ssize_t n = ::read(ready_read_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(Errno("read"));
    if (n == 0) return PipeRead::kEof;  // no write end left
    ready_buffer_.append(buf, static_cast<size_t>(n));
    return PipeRead::kData;
  }
}

Result<std::string> Subprocess::WaitForReadyLine(std::chrono::milliseconds timeout) {
  if (!ready_read_) return Fail(ErrorCode::kInvalidArgument, "no readiness pipe was requested");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto nl = ready_buffer_.find('\n'); nl != std::string::npos) {
      std::string line = ready_buffer_.substr(0, nl);
      ready_buffer_.erase(0, nl + 1);
      return line;
    }
    auto read = ReadReadyPipe(deadline);
    if (!read) return Fail(read.error());
    if (*read == PipeRead::kTimeout) {
      return Fail(ErrorCode::kUnavailable,
                  "no readiness line within " + std::to_string(timeout.count()) + " ms");
    }
    if (*read == PipeRead::kEof) {
      return Fail(ErrorCode::kUnavailable,
                  "the child closed its readiness pipe without writing a line (did it exit?)");
    }
  }
}

Result<void> Subprocess::WaitForReadyPipeClosed(std::chrono::milliseconds timeout) {
  if (!ready_read_) return Fail(ErrorCode::kInvalidArgument, "no readiness pipe was requested");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto read = ReadReadyPipe(deadline);
    if (!read) return Fail(read.error());
    if (*read == PipeRead::kEof) return {};
    if (*read == PipeRead::kTimeout) {
      return Fail(ErrorCode::kUnavailable, "the readiness pipe is still open after " +
                                               std::to_string(timeout.count()) + " ms");
    }
  }
}

std::string Subprocess::StdoutText() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stdout_;
}

std::string Subprocess::StderrText() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stderr_;
}

}  // namespace memprof::test_support
