#ifndef MEMPROF_TESTS_SUPPORT_SUBPROCESS_H_
#define MEMPROF_TESTS_SUPPORT_SUBPROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::test_support {

// Environment variables that would change how a child behaves and that a
// developer may well have exported in the shell running the tests. They are
// removed from every child's environment unless a test sets them explicitly,
// so a test sees exactly the environment it asked for.
inline constexpr const char* kScrubbedEnvPrefixes[] = {"MEMPROF_", "LD_PRELOAD", "MALLOC_CONF",
                                                       "JE_MALLOC_CONF", "GRPC_"};

struct SpawnOptions {
  // argv[0] must be a path (absolute or relative to the cwd); no PATH lookup.
  std::vector<std::string> argv;
  // Set on top of the test's (scrubbed) environment.
  std::map<std::string, std::string> env;
  // If >= 3: the child gets the write end of a pipe at this descriptor number
  // and MEMPROF_TEST_READY_FD=<number> in its environment (the readiness
  // handshake of tests/testprogs); read it with Subprocess::WaitForReadyLine().
  int ready_fd = -1;
  // true: the child's stdin is a stream socket the test writes to with
  // Subprocess::WriteStdin() (commands for a target program); false: /dev/null.
  bool stdin_pipe = false;
};

struct ExitStatus {
  int exit_code = -1;    // WEXITSTATUS when the process exited, else -1
  int term_signal = 0;   // the signal that killed it, else 0
  long max_rss_kb = 0;   // ru_maxrss of this child alone (wait4)

  // What a shell would report in $?: the exit code, or 128 + signal.
  int ShellCode() const { return term_signal != 0 ? 128 + term_signal : exit_code; }
};

// A child process owned by the test (RAII). stdin is /dev/null (or a socket
// the test writes to, see SpawnOptions::stdin_pipe); stdout and
// stderr are captured by a reader thread that drains both pipes concurrently
// (poll), so a child writing a lot never blocks on a full pipe. The child runs
// in its own process group with PR_SET_PDEATHSIG=SIGKILL; the destructor
// SIGKILLs the group and reaps it, so nothing outlives a failed assertion
// (and nothing outlives a crashed test binary either).
class Subprocess {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Subprocess>> Spawn(const SpawnOptions& options);

  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  const std::vector<std::string>& argv() const { return argv_; }

  // Reads the handshake pipe until a full line arrives; returns it without
  // the newline. Fails if the child closes the pipe (e.g. dies) first or the
  // timeout passes.
  [[nodiscard]] Result<std::string> WaitForReadyLine(std::chrono::milliseconds timeout);
  // After the ready line: waits until every copy of the handshake pipe's
  // write end is closed (the child closes it after writing, but a moment
  // later), so that the child's descriptor table no longer holds it. Fails
  // at the deadline (e.g. a forked child still holds a copy).
  [[nodiscard]] Result<void> WaitForReadyPipeClosed(std::chrono::milliseconds timeout);

  // Waits up to `timeout` for the child to exit and reaps it; then waits (up
  // to the same deadline) for its output pipes to reach EOF. nullopt if the
  // child is still running at the deadline. Returns the cached status once
  // reaped.
  std::optional<ExitStatus> Wait(std::chrono::milliseconds timeout);

  // Non-blocking: has the child exited (reaping it if so)?
  bool HasExited();

  // Sends `sig` to the child (not the group) unless it has been reaped.
  void Signal(int sig);

  // Writes all of `data` to the child's stdin (SpawnOptions::stdin_pipe);
  // false if there is none or the child no longer reads it. Never raises
  // SIGPIPE.
  bool WriteStdin(const std::string& data);
  // Closes the test's end of the child's stdin: the child reads EOF.
  void CloseStdin();

  // SIGKILLs the whole process group and reaps the child.
  ExitStatus KillAndReap();

  // Snapshots of what the child has written so far (complete after Wait()).
  std::string StdoutText() const;
  std::string StderrText() const;

 private:
  // What one read of the handshake pipe got: something (appended to
  // ready_buffer_), its end (no write end left), or nothing by the deadline.
  enum class PipeRead { kData, kEof, kTimeout };

  Subprocess() = default;
  bool TryReap(int flags);
  [[nodiscard]] Result<PipeRead> ReadReadyPipe(std::chrono::steady_clock::time_point deadline);
  void ReaderLoop(int out_fd, int err_fd, int wake_fd);
  bool WaitForOutputEof(std::chrono::steady_clock::time_point deadline);
  void StopReader();

  pid_t pid_ = -1;
  std::vector<std::string> argv_;
  std::optional<ExitStatus> status_;
  Fd ready_read_;
  Fd stdin_write_;
  std::string ready_buffer_;
  Fd wake_read_;
  Fd wake_write_;  // writing to it makes the reader thread stop
  std::thread reader_;
  mutable std::mutex mu_;
  std::condition_variable eof_cv_;
  bool output_eof_ = false;
  std::string stdout_;
  std::string stderr_;
};

// "a b 'c d'": the argv as one line for failure messages.
std::string JoinArgv(const std::vector<std::string>& argv);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_SUBPROCESS_H_
