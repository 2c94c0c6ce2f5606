#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_TARGET_PROCESS_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_TARGET_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/proc_status.h"
#include "common/result.h"
#include "tests/integration/harness/support_names.h"

namespace memprof::integration {

struct TargetOptions {
  // The target's command line; may also be `memprofctl run -- prog`, which
  // execs prog in place (same pid).
  std::vector<std::string> argv;
  // Added to the scrubbed environment. MEMPROF_SOCKET_DIR is set from
  // socket_dir and MEMPROF_TEST_READY_FD by the handshake.
  std::map<std::string, std::string> env;
  std::string socket_dir;
  // true: after the handshake, wait until <socket_dir>/<pid>.sock accepts a
  // connection. false: only the handshake (a target without an agent).
  bool expect_agent = true;
  // With expect_agent: false waits only for the socket file to appear and
  // never connects, so the agent is still "never contacted" when Start()
  // returns (what the idle-footprint and descriptor tests need).
  bool connect_to_agent = true;
  // The target's stdin is a socket the test writes commands to
  // (process().WriteStdin()); otherwise /dev/null.
  bool stdin_pipe = false;
  // After the handshake, also wait until the target has closed its handshake
  // pipe, so that every descriptor it holds is one it (or its agent) opened
  // afterwards; for tests that look at /proc/<pid>/fd.
  bool await_handshake_closed = false;
  std::chrono::milliseconds ready_timeout = std::chrono::seconds(30);
  std::chrono::milliseconds socket_timeout = std::chrono::seconds(30);
};

// A target program started for a test (tests/testprogs/*): it writes
// "ready\n" to $MEMPROF_TEST_READY_FD once it is running and then works until
// SIGTERM. Start() returns only once the program is ready and (if expected)
// its agent accepts connections; both are awaited with a deadline. The
// destructor SIGKILLs and reaps it (see Subprocess).
class TargetProcess {
 public:
  // The descriptor number the handshake pipe gets in the child.
  static constexpr int kReadyFd = 3;

  [[nodiscard]] static Result<std::unique_ptr<TargetProcess>> Start(const TargetOptions& options);

  pid_t pid() const { return process_->pid(); }
  const std::string& socket_path() const { return socket_path_; }
  Subprocess& process() { return *process_; }

  // Sends SIGTERM and waits for the exit; nullopt if it is still running at
  // the deadline.
  std::optional<ExitStatus> Terminate(std::chrono::milliseconds timeout = std::chrono::seconds(20));

  // /proc/<pid>/status of the running target.
  [[nodiscard]] Result<ProcStatus> ReadProcStatus() const;
  // A field of /proc/<pid>/status in kB ("VmRSS", "VmHWM"); 0 if absent.
  uint64_t ProcStatusKb(const std::string& field) const;

 private:
  TargetProcess() = default;
  [[nodiscard]] Result<void> AwaitSocket(std::chrono::milliseconds timeout, bool connect);

  std::unique_ptr<Subprocess> process_;
  std::string socket_path_;
};

// Whether something accepts connections on the Unix socket at `path` now.
bool SocketAccepts(const std::string& path);
// Whether `path` is a Unix socket file (lstat; nothing connects to it).
bool IsSocketFile(const std::string& path);

// What the descriptors of every thread of `pid` refer to ("socket:[123]",
// "/memfd:memprof-heap-dump (deleted)", ...): the agent's thread and gRPC's
// have a descriptor table of their own, which /proc/<pid>/fd (the main
// thread's) does not show. One entry per descriptor per table; empty if the
// process is gone.
std::vector<std::string> DescriptorTargetsOfAllThreads(pid_t pid);

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_TARGET_PROCESS_H_
