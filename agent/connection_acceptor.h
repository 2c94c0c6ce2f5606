#ifndef MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_
#define MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::agent {

// Accepts connections on the agent's listening socket on one thread of its
// own and hands each authorized one to `handler` (which adopts it into gRPC).
// Authorized means SO_PEERCRED reports the agent's own effective uid or root;
// anyone else is disconnected before a byte is read.
//
// After every wake-up the thread calls `tick`, which says how long it may
// block next (nullopt: until the next connection). With nothing to do the
// thread blocks in poll() with no timeout, so an idle agent never wakes up.
// Stop() wakes it through an eventfd and joins it.
class ConnectionAcceptor {
 public:
  using Handler = std::function<void(Fd)>;
  using Tick = std::function<std::optional<std::chrono::milliseconds>()>;

  ConnectionAcceptor(int listen_fd, Handler handler, Tick tick)
      : listen_fd_(listen_fd), handler_(std::move(handler)), tick_(std::move(tick)) {}
  ~ConnectionAcceptor() { Stop(); }
  ConnectionAcceptor(const ConnectionAcceptor&) = delete;
  ConnectionAcceptor& operator=(const ConnectionAcceptor&) = delete;

  [[nodiscard]] Result<void> Start();
  void Stop();
  // In a forked child the thread does not exist: forget it without joining.
  void AbandonAfterFork();

 private:
  void Loop();
  // Accepts one pending connection. False when out of descriptors or memory,
  // so the caller should back off before trying again.
  bool AcceptOne();

  int listen_fd_;
  Handler handler_;
  Tick tick_;
  Fd wake_fd_;
  std::thread thread_;
};

// Whether a peer with uid `peer_uid` may talk to an agent running as `self`.
bool PeerAllowed(uid_t peer_uid, uid_t self);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_
