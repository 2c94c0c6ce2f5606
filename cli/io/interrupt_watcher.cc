#include "cli/io/interrupt_watcher.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

namespace memprof::cli {
namespace {

sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

Result<std::unique_ptr<InterruptWatcher>> InterruptWatcher::Start() {
  const sigset_t set = WatchedSignals();
  sigset_t old_mask;
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &set, &old_mask); rc != 0) {
    return Fail(ErrorCode::kInternal, std::string("pthread_sigmask: ") + std::strerror(rc));
  }
  Fd signal_fd(::signalfd(-1, &set, SFD_CLOEXEC));
  Fd wake_fd(::eventfd(0, EFD_CLOEXEC));
  if (!signal_fd || !wake_fd) {
    const int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return Fail(ErrorCode::kInternal, std::string("signalfd/eventfd: ") + std::strerror(err));
  }
  return std::unique_ptr<InterruptWatcher>(
      new InterruptWatcher(std::move(signal_fd), std::move(wake_fd), old_mask));
}

InterruptWatcher::InterruptWatcher(Fd signal_fd, Fd wake_fd, const sigset_t& old_mask)
    : signal_fd_(std::move(signal_fd)), wake_fd_(std::move(wake_fd)), old_mask_(old_mask) {
  thread_ = std::thread([this] { Loop(); });
}

InterruptWatcher::~InterruptWatcher() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void InterruptWatcher::Loop() {
  pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
  while (true) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    signalfd_siginfo info{};
    if (::read(signal_fd_.get(), &info, sizeof(info)) != sizeof(info)) continue;
    const int signo = static_cast<int>(info.ssi_signo);
    int expected = 0;
    if (signal_.compare_exchange_strong(expected, signo)) {
      // Runs the registered stop callbacks (TryCancel) on this thread.
      stop_.request_stop();
      continue;
    }
    expected = 0;
    if (abort_signal_.compare_exchange_strong(expected, signo)) abort_.request_stop();
  }
}

void InterruptWatcher::ReRaise(int signal) {
  std::signal(signal, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);
  // Not reached: the default action of SIGINT/SIGTERM ends the process.
  ::_exit(128 + signal);
}

}  // namespace memprof::cli
