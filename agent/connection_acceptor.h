#ifndef MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_
#define MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "common/fd.h"
#include "common/result.h"
#include "common/unix_socket.h"

namespace memprof::agent {

// Accepts connections on the agent's listening socket on one thread of its
// own and hands each to `handler` with the peer's SO_PEERCRED credentials
// (the handler records them in the PeerRegistry and adopts the connection
// into gRPC, where a peer without the right uid is answered
// PERMISSION_DENIED). A connection whose credentials cannot be read is closed.
//
// After every wake-up the thread calls `tick`, which says how long it may
// block next (nullopt: until the next connection). With nothing to do the
// thread blocks in poll() with no timeout, so an idle agent never wakes up.
// Stop() wakes it through an eventfd and joins it.
class ConnectionAcceptor {
 public:
  using Handler = std::function<void(Fd, const PeerCredentials&)>;
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

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_CONNECTION_ACCEPTOR_H_
