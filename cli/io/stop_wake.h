#ifndef MEMPROF_CLI_IO_STOP_WAKE_H_
#define MEMPROF_CLI_IO_STOP_WAKE_H_

#include <chrono>
#include <functional>
#include <stop_token>

#include "common/fd.h"

namespace memprof::cli {

// A descriptor that becomes readable when `stop` is requested, for a poll()
// to wait on beside its own: a stop request wakes the wait at once. fd() is
// -1 when the kernel gave no eventfd; the waiter then looks at the token
// every kPollWithoutWake instead.
class StopWake {
 public:
  static constexpr std::chrono::milliseconds kPollWithoutWake{100};

  explicit StopWake(const std::stop_token& stop);
  StopWake(const StopWake&) = delete;
  StopWake& operator=(const StopWake&) = delete;

  int fd() const { return fd_.get(); }

 private:
  Fd fd_;
  std::stop_callback<std::function<void()>> on_stop_;
};

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_STOP_WAKE_H_
