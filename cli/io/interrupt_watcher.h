#ifndef MEMPROF_CLI_IO_INTERRUPT_WATCHER_H_
#define MEMPROF_CLI_IO_INTERRUPT_WATCHER_H_

#include <signal.h>

#include <atomic>
#include <memory>
#include <stop_token>
#include <thread>

#include "common/fd.h"
#include "common/result.h"

namespace memprof::cli {

// Turns SIGINT and SIGTERM into a stop request so that a command can cancel
// its RPC (grpc::ClientContext::TryCancel), remove its temp file and return;
// the caller then calls ReRaise() so the shell still sees death by the signal
// (exit status 130 / 143).
//
// Start() blocks both signals in the calling thread, so it must run before
// any other thread exists (gRPC creates its threads later and inherits the
// mask); a dedicated thread reads them from a signalfd. Destruction stops the
// thread and restores the previous signal mask.
class InterruptWatcher {
 public:
  [[nodiscard]] static Result<std::unique_ptr<InterruptWatcher>> Start();
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // Stopped once SIGINT or SIGTERM has arrived.
  std::stop_token stop_token() const { return stop_.get_token(); }
  // The first signal received, 0 if none.
  int received_signal() const { return signal_.load(); }

  // Stopped once a second SIGINT or SIGTERM has arrived: for commands whose
  // first signal means "finish early" (profile), the second means "abort".
  std::stop_token abort_token() const { return abort_.get_token(); }
  // The second signal received, 0 if none.
  int abort_signal() const { return abort_signal_.load(); }

  // Kills the calling process with `signal` under its default disposition.
  [[noreturn]] static void ReRaise(int signal);

 private:
  InterruptWatcher(Fd signal_fd, Fd wake_fd, const sigset_t& old_mask);
  void Loop();

  Fd signal_fd_;
  Fd wake_fd_;         // eventfd written by the destructor to end Loop()
  sigset_t old_mask_;  // the caller's signal mask before Start()
  std::stop_source stop_;
  std::atomic<int> signal_{0};
  std::stop_source abort_;
  std::atomic<int> abort_signal_{0};
  std::thread thread_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_INTERRUPT_WATCHER_H_
