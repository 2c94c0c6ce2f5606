#ifndef MEMPROF_AGENT_HEAP_CAPTURE_WATCHER_H_
#define MEMPROF_AGENT_HEAP_CAPTURE_WATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/allocators/allocator.h"
#include "agent/heap/capture_keeper.h"
#include "agent/heap/dump_streamer.h"
#include "common/result.h"

namespace memprof::agent {

// How often an armed watcher reads jemalloc's stats.allocated (after an
// epoch refresh): a spike held for less than this may be missed.
inline constexpr std::chrono::milliseconds kCapturePollInterval(100);
// Bounds of the growth that triggers a capture (`activate --capture-growth`).
inline constexpr uint64_t kMinCaptureGrowthBytes = uint64_t{1} << 20;  // 1 MiB
inline constexpr uint64_t kMaxCaptureGrowthBytes = uint64_t{1} << 40;  // 1 TiB

// What `activate --capture-growth SIZE --keep N` asks for.
struct CaptureSettings {
  uint64_t growth_bytes = 0;
  uint32_t keep = kDefaultCaptureKeep;
};

// kInvalidArgument, saying which bound, unless growth and keep are within
// bounds.
[[nodiscard]] Result<void> CheckCaptureSettings(const CaptureSettings& settings);

// Capturing as seen at one moment.
struct CaptureState {
  bool armed = false;
  uint64_t growth_bytes = 0;      // while armed
  uint32_t keep = 0;
  uint64_t high_water_bytes = 0;  // the mark the next capture must pass by growth_bytes
  uint64_t taken_total = 0;
  std::vector<CaptureInfo> held;  // oldest first
};

// Peak capture: while armed, a thread of its own (`memprof-capture`) reads
// stats.allocated every kCapturePollInterval and, when it has passed the
// high-water mark by `growth_bytes`, has jemalloc write a heap profile into a
// memfd on that thread and makes the allocated bytes of that moment the new
// mark. The profiles go into a CaptureKeeper (at most `keep`, oldest
// dropped), so memory held is bounded by `keep` profiles, plus the one being
// written.
//
// The watcher lives with the agent's server state, not with gRPC: captures
// are taken with nobody connected, after the on-demand server has shut down.
// The thread exists only while armed (an idle agent keeps zero wake-ups),
// blocks every signal, and ends by itself when it finds profiling no longer
// active (`deactivate`, a window that ended). Disarming keeps the captures.
//
// Fork: the child inherits neither the arming nor the captures: the thread
// does not exist there, the parent's server state (this object with it) is
// abandoned, never destroyed, and CaptureKeeper closes the child's copies of
// the capture files.
//
// Thread-safe.
class CaptureWatcher {
 public:
  explicit CaptureWatcher(const Allocator& allocator,
                          std::chrono::milliseconds poll = kCapturePollInterval);
  ~CaptureWatcher();
  CaptureWatcher(const CaptureWatcher&) = delete;
  CaptureWatcher& operator=(const CaptureWatcher&) = delete;

  // Arms, or re-arms with new settings: the high-water mark becomes the
  // allocated bytes of now, and at most `keep` captures are kept from now on.
  // kInvalidArgument for a growth or keep out of bounds; kFailedPrecondition
  // without heap profiling or jemalloc statistics. Profiling must be active
  // for captures to show anything (the caller activates it first).
  [[nodiscard]] Result<CaptureState> Arm(const CaptureSettings& settings);
  // Stops watching (joins the thread); captures taken are kept.
  void Disarm();
  CaptureState State();
  // Capture `sequence` to stream, as a complete HeapDump, and what it is;
  // kNotFound when it is not held.
  struct Opened {
    std::unique_ptr<HeapDump> dump;
    CaptureInfo info;
  };
  [[nodiscard]] Result<Opened> Open(uint64_t sequence);


 private:
  void Loop();
  void PollOnce(std::unique_lock<std::mutex>& lock, const JemallocControl& jemalloc);
  void Capture(const JemallocControl& jemalloc, uint64_t allocated);
  void StartThreadLocked();

  const Allocator& allocator_;
  const std::chrono::milliseconds poll_;
  CaptureKeeper keeper_;
  std::mutex lifecycle_mu_;  // Arm/Disarm: starting and joining the thread
  std::thread thread_;       // guarded by lifecycle_mu_
  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;        // guarded by mu_: the thread has not left its loop
  bool armed_ = false;          // guarded by mu_
  CaptureSettings settings_;    // guarded by mu_
  uint64_t high_water_ = 0;     // guarded by mu_
  uint64_t arm_generation_ = 0; // guarded by mu_: bumped by each Arm
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_CAPTURE_WATCHER_H_
