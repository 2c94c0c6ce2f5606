#ifndef MEMPROF_AGENT_CORE_CONNECTION_ACCEPTOR_H_
#define MEMPROF_AGENT_CORE_CONNECTION_ACCEPTOR_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/core/child_watch.h"
#include "agent/core/socket_registry.h"
#include "agent/shared/owned_fd.h"
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
// The host owns its descriptor table and may close every descriptor it did
// not open itself (close_range, closefrom) at any moment. The thread
// therefore starts by taking a table of its own (private_fd_table.h), which
// every thread it starts shares: its socket and everything gRPC opens live
// there, out of the host's reach. Only the wake-up pipe is in both tables,
// since host threads write to it (a fork, Stop()). Every agent descriptor is
// an OwnedFd: close-on-exec, at a high number, and checked by device and
// inode before each use; one the host closed is forgotten, never closed.
// Where the kernel refuses a table of our own, the thread shares the host's:
// poll() then reports a closed descriptor (POLLNVAL) at the next wake-up,
// usually the next connection attempt, and the thread re-creates its socket
// at the same path (and its wake-up pipe) and logs one note. The connection
// that woke it is lost with the old socket; clients retry.
//
// The thread also watches the children the process forks (child_watch.h)
// and removes the socket of each that ends without removing it itself.
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
    // Asked once the delay has passed: false publishes nothing (the thread
    // ends), for a child that could not be served anyway.
    std::function<bool()> may_publish;
    // Run on the thread once it is ready, before the delay (a forked child
    // takes over its parent's profiling window there).
    std::function<void()> first_task;
  };

  ConnectionAcceptor(Options options, Handler handler, Tick tick)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        tick_(std::move(tick)),
        children_(std::make_unique<ChildWatch>(options_.socket_dir)) {}
  ~ConnectionAcceptor() { Stop(); }
  ConnectionAcceptor(const ConnectionAcceptor&) = delete;
  ConnectionAcceptor& operator=(const ConnectionAcceptor&) = delete;

  [[nodiscard]] Result<void> Start();
  // Wakes the thread so that it calls `tick` again soon.
  void Wake();
  // After fork(), in the parent, on the forking thread `tid`: the thread
  // starts watching the new child (child_watch.h).
  void NoteFork(pid_t tid);
  // Runs `task` on the accept thread, the one that runs the server, and
  // waits for it (at most 2 s). False when the thread is not running or
  // could not be woken.
  bool RunOnThread(std::function<void()> task);
  void Stop();
  // Held across fork() by the forking thread, so that the child never
  // inherits the lock held by the accept thread (which does not exist there).
  void LockForFork() { mu_.lock(); }
  void UnlockAfterForkInParent() { mu_.unlock(); }
  // In a forked child (after LockForFork in the parent) the thread does not
  // exist: forget it without joining, close the inherited descriptors that
  // are still ours, keep the socket path (it is the parent's). Releases the
  // lock.
  void AbandonAfterFork();

  // The published socket's path; empty until it is published.
  std::string socket_path() const;
  // The identity the socket file belongs to; nullopt until it is published.
  std::optional<FsIdentity> socket_identity() const;
  // SocketRegistry::HandOver on the published socket (nothing before).
  [[nodiscard]] Result<void> HandOverSocket(const FsIdentity& heir);

 private:
  Result<void> Publish();
  [[nodiscard]] Result<void> MakeWakePipe();
  // Runs on the thread: the private table, then the socket (without a
  // delay); reports to Start() through `started`.
  Result<void> Prepare();
  void Run(std::promise<Result<void>>* started);
  void LoopUntilStopped();
  // A forked child's wait before it publishes. False if it should not go on.
  bool PublishAfterDelay();
  void SetRunning(bool running);
  enum class Repair { kNone, kRepaired, kFailed };
  // Re-creates what the host closed; kFailed when the socket cannot be renewed.
  Repair RepairDescriptors();
  // Publishes the socket again if its file was removed; kRepaired if it did,
  // else `repair` unchanged (a failure keeps the old socket and is retried).
  Repair RepublishIfRemoved(Repair repair);
  // Accepts one pending connection. False when out of descriptors or memory,
  // so the caller should back off before trying again.
  bool AcceptOne();
  // Wakes the thread through a connection to its own socket (when the host
  // closed the wake-up pipe). False if that failed too.
  bool WakeThroughSocket();
  // Watches the children of the threads NoteFork() named since the last call.
  void WatchNewChildren();

  const Options options_;
  Handler handler_;
  Tick tick_;
  mutable std::mutex mu_;  // guards socket_ (its path is read by other threads)
  std::unique_ptr<SocketRegistry> socket_;
  OwnedFd wake_read_;
  OwnedFd wake_write_;
  std::atomic<bool> stopping_{false};
  std::promise<void> exited_;  // set by the thread as it returns
  std::future<void> exited_future_ = exited_.get_future();
  // Connections this process made to its own socket only to wake the thread
  // (when the host closed the wake-up pipe): dropped, never served.
  std::atomic<int> self_wakes_{0};
  // Only the accept thread uses it; a forked child leaks it (the parent's
  // thread may have been changing it at fork() time).
  std::unique_ptr<ChildWatch> children_;
  // Only the accept thread uses it: the last try to publish a removed
  // socket file again failed (so its warning is not repeated).
  bool republish_failed_ = false;
  std::mutex fork_mu_;            // guards forked_by_
  std::vector<pid_t> forked_by_;  // threads that forked since the thread last looked

  // RunOnThread()'s hand-over.
  void RunPendingTask();
  std::mutex task_mu_;
  std::condition_variable task_cv_;
  std::function<void()> task_;
  uint64_t task_seq_ = 0;  // number of the last task handed over
  uint64_t done_seq_ = 0;  // number of the last task run to its end
  bool running_ = false;  // the thread is in Loop()
  std::thread thread_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CORE_CONNECTION_ACCEPTOR_H_
