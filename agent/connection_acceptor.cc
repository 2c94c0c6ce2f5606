#include "agent/connection_acceptor.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "agent/agent_logger.h"
#include "common/unix_socket.h"

namespace memprof::agent {
namespace {

// After EMFILE/ENFILE the pending connection stays queued and poll() would
// report it again at once; back off instead of spinning.
constexpr int kBackoffMs = 100;

}  // namespace

Result<void> ConnectionAcceptor::Start() {
  wake_fd_.Reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_) {
    return Fail(ErrorCode::kInternal, std::string("eventfd: ") + std::strerror(errno));
  }
  thread_ = std::thread([this] { Loop(); });
  return {};
}

void ConnectionAcceptor::Stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  if (::write(wake_fd_.get(), &one, sizeof(one)) < 0) {
    Logger().warn("could not wake the accept thread: {}", std::strerror(errno));
  }
  thread_.join();
}

void ConnectionAcceptor::AbandonAfterFork() {
  if (thread_.joinable()) thread_.detach();
  wake_fd_.Reset();
}

void ConnectionAcceptor::Loop() {
  int timeout = -1;
  bool backoff = false;
  while (true) {
    pollfd fds[2] = {{wake_fd_.get(), POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    // While backing off, watch only the wake-up descriptor.
    int wait = backoff ? (timeout < 0 ? kBackoffMs : std::min(timeout, kBackoffMs)) : timeout;
    int n = ::poll(fds, backoff ? 1 : 2, wait);
    if (n < 0 && errno != EINTR) {
      Logger().error("accept loop stopped: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[0].revents != 0) return;
    backoff = n > 0 && fds[1].revents != 0 && !AcceptOne();
    auto next = tick_();
    timeout = next ? static_cast<int>(std::min<int64_t>(next->count(), INT32_MAX)) : -1;
  }
}

bool ConnectionAcceptor::AcceptOne() {
  // gRPC adopts the descriptor as is and expects it non-blocking.
  Fd conn(::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!conn) {
    const int err = errno;
    if (err == EAGAIN || err == EINTR || err == ECONNABORTED) return true;
    Logger().warn("accept: {}", std::strerror(err));
    return !(err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM);
  }
  auto peer = GetPeerCredentials(conn.get());
  if (!peer) {
    Logger().warn("closed a connection: {}", peer.error().message);
    return true;
  }
  handler_(std::move(conn), *peer);
  return true;
}

}  // namespace memprof::agent
