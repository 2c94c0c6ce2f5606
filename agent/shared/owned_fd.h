#ifndef MEMPROF_AGENT_SHARED_OWNED_FD_H_
#define MEMPROF_AGENT_SHARED_OWNED_FD_H_

#include <sys/types.h>

#include "agent/shared/high_fd_floor.h"
#include "common/fd.h"

namespace memprof::agent {

// A descriptor the agent opened, remembered together with the identity
// (device and inode) of what it refers to.
//
// The host owns the descriptor table: it may close every descriptor it did
// not open itself (close_range(3, ~0U), closefrom) and then open its own,
// which get the same numbers. A number alone therefore proves nothing. Before
// the agent uses or closes one of its descriptors it checks that the number
// still refers to the file it opened (Intact()); if not, the descriptor is
// forgotten, never closed, since the number now belongs to the host.
//
// Descriptors are close-on-exec and moved to high numbers (HighFdFloor()),
// away from the small numbers that hosts reuse or assume to be free.
class OwnedFd {
 public:
  OwnedFd() = default;
  // Takes ownership of `fd`: moves it to a high number and records what it is.
  explicit OwnedFd(Fd fd);
  ~OwnedFd() { Reset(); }
  OwnedFd(OwnedFd&& other) noexcept;
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // The file's identity, recorded when it was taken (0 for none).
  dev_t device() const { return dev_; }
  ino_t inode() const { return ino_; }
  // Whether the number still refers to the file the agent opened.
  bool Intact() const;
  // Closes the descriptor if it is still the agent's; otherwise only forgets it.
  void Reset();
  // Forgets the descriptor without closing it.
  void Forget();

 private:
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};


// Moves `fd` to a close-on-exec descriptor at HighFdFloor() or above and
// closes the original. Keeps `fd` as it is when no higher number is free.
// Once the host has taken a number from the agent (an OwnedFd found not
// Intact()), new descriptors go above it: the host may be about to reuse
// exactly the numbers it just closed, and a number claimed by both at once
// makes the host's dup2() fail with EBUSY.
Fd MoveToHighNumber(Fd fd);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_OWNED_FD_H_
