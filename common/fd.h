#ifndef MEMPROF_COMMON_FD_H_
#define MEMPROF_COMMON_FD_H_

#include <cstdint>
#include <string_view>

#include "common/result.h"

namespace memprof {

// Move-only owner of a file descriptor; closes it when destroyed.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }

  Fd(Fd&& other) noexcept : fd_(other.Release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing.
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the current descriptor (if any) and owns `fd` instead.
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// The size in bytes of the open file `fd` (fstat), or why it cannot be read.
[[nodiscard]] Result<uint64_t> FileSize(int fd);

// Writes all of `data` to `fd`, retrying short writes and EINTR. A failure
// is kInternal: "writing <what>: <the reason>".
[[nodiscard]] Result<void> WriteAll(int fd, std::string_view data, std::string_view what);

}  // namespace memprof

#endif  // MEMPROF_COMMON_FD_H_
