#ifndef MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_
#define MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent/owned_fd.h"
#include "agent/socket_registry.h"
#include "common/fd.h"
#include "common/result.h"
#include "common/unix_socket.h"

namespace memprof::agent {

// The agent's only thread while it is idle ("memprof-accept"). It publishes
// the socket <dir>/<pid>.sock (SocketRegistry), accepts connections on it and
// hands each to `handler` with the peer's SO_PEERCRED credentials. A
// connection whose credentials cannot be read is closed.
//
// After every wake-up the thread calls `tick`, which says how long it may
// block next (nullopt: until the next connection). With nothing to do the
// thread blocks in poll() with no timeout, so an idle agent never wakes up.
//
// The host may close the agent's descriptors at any time. poll() keeps the
// closed files alive while it sleeps, so the thread notices only at its next
// wake-up, usually the next connection attempt: it then checks that its
// descriptors are still its own (OwnedFd), re-creates whatever is not (the
// socket at the same path, the wake-up pipe) and logs one note. The
// connection that woke it is lost with the old socket; clients retry.
//
// The thread blocks every signal (threads it starts inherit that), so the
// host's signals are never delivered to it.
class ConnectionAcceptor {
 public:
  using Handler = std::function<void(Fd, const PeerCredentials&)>;
  using Tick = std::function<std::optional<std::chrono::milliseconds>()>;

  struct Options {
    std::string socket_dir;
    pid_t pid = 0;
    // How long the thread waits before it publishes the socket. 0 publishes
    // it in Start(), which then reports any error; otherwise errors are only
    // logged. A forked child waits, so that a child that exec()s or exits
    // right away leaves nothing behind.
    std::chrono::milliseconds publish_delay{0};
  };

  ConnectionAcceptor(Options options, Handler handler, Tick tick)
      : options_(std::move(options)), handler_(std::move(handler)), tick_(std::move(tick)) {}
  ~ConnectionAcceptor() { Stop(); }
  ConnectionAcceptor(const ConnectionAcceptor&) = delete;
  ConnectionAcceptor& operator=(const ConnectionAcceptor&) = delete;

  [[nodiscard]] Result<void> Start();
  // Wakes the thread so that it calls `tick` again soon.
  void Wake();
  void Stop();
  // In a forked child the thread does not exist: forget it without joining,
  // close the inherited descriptors that are still ours, keep the socket
  // path (it is the parent's).
  void AbandonAfterFork();

  // The published socket's path; empty until it is published.
  std::string socket_path() const;

 private:
  Result<void> Publish();
  [[nodiscard]] Result<void> MakeWakePipe();
  void Run();
  void Loop();
  enum class Repair { kNone, kRepaired, kFailed };
  // Re-creates what the host closed; kFailed when the socket cannot be renewed.
  Repair RepairDescriptors();
  // Accepts one pending connection. False when out of descriptors or memory,
  // so the caller should back off before trying again.
  bool AcceptOne();
  // Wakes the thread through a connection to its own socket (when the host
  // closed the wake-up pipe). False if that failed too.
  bool WakeThroughSocket();

  const Options options_;
  Handler handler_;
  Tick tick_;
  mutable std::mutex mu_;  // guards socket_ (its path is read by other threads)
  std::unique_ptr<SocketRegistry> socket_;
  OwnedFd wake_read_;
  OwnedFd wake_write_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_
