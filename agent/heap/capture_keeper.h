#ifndef MEMPROF_AGENT_HEAP_CAPTURE_KEEPER_H_
#define MEMPROF_AGENT_HEAP_CAPTURE_KEEPER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "agent/shared/owned_fd.h"
#include "common/fd.h"
#include "common/result.h"

namespace memprof::agent {

// How many captures may be kept (`activate --keep`): each is one heap
// profile in the agent's memory, so this bounds what capturing may hold.
inline constexpr uint32_t kMinCaptureKeep = 1;
inline constexpr uint32_t kMaxCaptureKeep = 16;
inline constexpr uint32_t kDefaultCaptureKeep = 4;

// What took a capture.
enum class CaptureTrigger { kGrowth, kNearLimit };

// One heap profile taken at a new high-water mark of allocated bytes, or
// near the memory cgroup's limit.
struct CaptureInfo {
  uint64_t sequence = 0;  // 1, 2, ... per armed process; never reused
  int64_t created_unix_ms = 0;
  uint64_t allocated_bytes = 0;  // jemalloc stats.allocated when it was taken
  uint64_t size_bytes = 0;       // of the heap_v2 profile
  uint64_t sample_interval_bytes = 0;
  CaptureTrigger trigger = CaptureTrigger::kGrowth;
  uint64_t cgroup_usage_bytes = 0;  // 0 unless near-limit capture is armed
  uint64_t cgroup_limit_bytes = 0;
};

// Whether `allocated` has passed the high-water mark by `growth` bytes or
// more (the capture watcher's trigger). A pure function: unit-tested alone.
bool CaptureDue(uint64_t allocated, uint64_t high_water, uint64_t growth);

// The captures the agent holds: a ring of at most `keep` profiles, each in a
// memfd of its own (nothing on disk), the oldest dropped when a new one
// arrives. Captures are numbered here, in the order they are added.
//
// Descriptors follow the agent's rules (owned_fd.h): high numbers, checked
// to still be the agent's before each use or close. A capture whose
// descriptor the host closed (close_range) is forgotten.
//
// Fork: the child must not keep the parent's captures alive (each holds the
// memory of a profile). Every keeper registers itself for a pthread_atfork
// child handler that closes the child's copies of its files (those still the
// agent's: same device and inode). The handler takes no lock, since fork()
// may come while another thread holds one (and the agent's own prepare
// handler waits for gRPC calls that may be waiting for the keeper): it reads
// a table of descriptors and identities that every change republishes
// atomically, slot by slot. The keeper object itself is abandoned in the
// child with the rest of the parent's server state.
//
// Thread-safe.
class CaptureKeeper {
 public:
  explicit CaptureKeeper(uint32_t keep = kDefaultCaptureKeep);
  ~CaptureKeeper();
  CaptureKeeper(const CaptureKeeper&) = delete;
  CaptureKeeper& operator=(const CaptureKeeper&) = delete;

  // Keeps at most `keep` (clamped to kMinCaptureKeep..kMaxCaptureKeep)
  // captures from now on, dropping the oldest beyond that.
  void SetKeep(uint32_t keep);
  uint32_t keep() const;

  // Remembers the file of a capture being written, so that a fork meanwhile
  // does not leave the child a copy nobody closes. Returns its number.
  int BeginCapture(OwnedFd fd);
  // Moves the file begun as `fd_number` into the ring as the newest capture
  // (`info.sequence` is assigned here), dropping the oldest beyond `keep`.
  // Returns the capture's info.
  CaptureInfo Add(int fd_number, CaptureInfo info);
  // Forgets (and closes) the file begun as `fd_number`: its capture failed.
  void Abandon(int fd_number);

  // The captures held, oldest first.
  std::vector<CaptureInfo> Held();
  // Captures added since the process started (held or dropped).
  uint64_t TakenTotal() const;

  // A new descriptor of capture `sequence`, to read it with (the capture may
  // be dropped meanwhile), and its info. kNotFound when it is not held
  // (never taken, or dropped for newer ones).
  struct Opened {
    Fd fd;
    CaptureInfo info;
  };
  [[nodiscard]] Result<Opened> Open(uint64_t sequence);
  // Drops capture `sequence` now, if it is held.
  void Remove(uint64_t sequence);

  // In a forked child (the atfork handler), without a lock: closes the
  // child's copies of the capture files, each only if still the agent's.
  void CloseCopiesAfterFork();

 private:
  struct Entry {
    CaptureInfo info;
    OwnedFd fd;
  };
  // A descriptor and what it refers to, for the child after fork().
  struct ForkSlot {
    std::atomic<int> fd{-1};
    std::atomic<uint64_t> dev{0};
    std::atomic<uint64_t> ino{0};
  };
  void TrimLocked();
  void ForgetLostLocked();
  void PublishLocked();

  mutable std::mutex mu_;
  uint32_t keep_;                 // guarded by mu_
  std::deque<Entry> held_;         // guarded by mu_; front = oldest
  std::vector<OwnedFd> writing_;  // guarded by mu_; files being written
  uint64_t taken_ = 0;            // guarded by mu_
  std::array<ForkSlot, kMaxCaptureKeep + 1> fork_slots_;  // written under mu_, read by the child
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_CAPTURE_KEEPER_H_
