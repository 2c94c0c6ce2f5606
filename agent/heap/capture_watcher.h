#ifndef MEMPROF_AGENT_HEAP_CAPTURE_WATCHER_H_
#define MEMPROF_AGENT_HEAP_CAPTURE_WATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "agent/allocators/allocator.h"
#include "agent/heap/capture_keeper.h"
#include "agent/heap/dump_streamer.h"
#include "agent/heap/state_changes.h"
#include "common/cgroup_memory.h"
#include "common/result.h"

namespace memprof::agent {

// How often an armed watcher reads the allocated bytes (jemalloc's
// stats.allocated after an epoch refresh; elsewhere the allocator's summary):
// a spike held for less than this may be missed.
inline constexpr std::chrono::milliseconds kCapturePollInterval(100);
// Bounds of the growth that triggers a capture (`activate --capture-growth`).
inline constexpr uint64_t kMinCaptureGrowthBytes = uint64_t{1} << 20;  // 1 MiB
inline constexpr uint64_t kMaxCaptureGrowthBytes = uint64_t{1} << 40;  // 1 TiB

// Near-limit capture (`activate --capture-near-limit P%`): the first at P%
// of the memory cgroup's limit, then one at every further step.
inline constexpr uint32_t kMinNearLimitPercent = 1;
inline constexpr uint32_t kMaxNearLimitPercent = 99;
inline constexpr uint32_t kNearLimitStepPercent = 2;
// Within this many percent of the limit below the first share, the watcher
// reads the cgroup kNearLimitPollDivisor times per kCapturePollInterval (a
// process that grows fast crosses several steps in 100 ms); the allocator is
// still read once per interval.
inline constexpr uint32_t kNearLimitApproachPercent = 10;
inline constexpr int kNearLimitPollDivisor = 10;

// What `activate [--capture-growth SIZE] [--capture-near-limit P%] --keep N`
// asks for: either trigger, or both.
struct CaptureSettings {
  uint64_t growth_bytes = 0;        // 0: no growth trigger
  uint32_t keep = kDefaultCaptureKeep;
  uint32_t near_limit_percent = 0;  // 0: no near-limit trigger
};

// kInvalidArgument, saying which bound, unless a trigger is asked for and
// growth, share and keep are within bounds.
[[nodiscard]] Result<void> CheckCaptureSettings(const CaptureSettings& settings);

// The limit near-limit capture would watch, or kFailedPrecondition saying
// why there is none.
[[nodiscard]] Result<CgroupMemoryLimit> RequireMemoryLimit();

// Whether `usage` has reached `percent`% of `limit` (exact, no overflow).
bool NearLimitDue(uint64_t usage, uint64_t limit, uint32_t percent);
// The share at which the next near-limit capture comes, once one was taken
// at `usage`: the first of percent, percent + step, ... not yet reached.
// Past 100 no capture comes.
uint32_t NextNearLimitPercent(uint64_t usage, uint64_t limit, uint32_t percent);

// Capturing as seen at one moment.
struct CaptureState {
  bool armed = false;
  uint64_t growth_bytes = 0;      // while armed
  uint32_t keep = 0;
  uint64_t high_water_bytes = 0;  // the mark the next capture must pass by growth_bytes
  uint64_t taken_total = 0;
  std::vector<CaptureInfo> held;  // oldest first
  uint32_t near_limit_percent = 0;       // while armed near the limit
  uint32_t next_near_limit_percent = 0;  // the share the next near-limit capture comes at
};

// Peak capture: while armed, a thread of its own (`memprof-capture`) reads
// the allocated bytes every kCapturePollInterval and, when they have passed
// the high-water mark by `growth_bytes`, has the heap profiler (jemalloc's,
// or memprof's sampler where the allocator cannot sample) write a heap
// profile into a memfd on that thread and makes the allocated bytes of that moment the new
// mark. Near the limit, it reads the usage and limit of the memory cgroup
// level that binds (common/cgroup_memory.h: two or three small files) on the
// same tick (ten times per tick once within kNearLimitApproachPercent of the
// first share), and takes a profile when the usage reaches `near_limit_percent`, then
// at every further kNearLimitStepPercent; when the usage falls back below
// the first share by a step, the next approach starts at it again. The
// profiles go into a CaptureKeeper (at most `keep`, oldest
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
// Each change of what State() shows (armed, disarmed, a capture taken, the
// oldest dropped for it) is told to `changes` if given, with none of the
// watcher's locks held.
//
// Thread-safe.
class CaptureWatcher {
 public:
  explicit CaptureWatcher(const Allocator& allocator,
                          std::chrono::milliseconds poll = kCapturePollInterval,
                          StateChanges* changes = nullptr);
  ~CaptureWatcher();
  CaptureWatcher(const CaptureWatcher&) = delete;
  CaptureWatcher& operator=(const CaptureWatcher&) = delete;

  // Arms, or re-arms with new settings: the high-water mark becomes the
  // allocated bytes of now, and at most `keep` captures are kept from now on.
  // kInvalidArgument for a growth or keep out of bounds; kFailedPrecondition
  // without a heap profiler that can capture (jemalloc's, or memprof's
  // sampler), or without allocator statistics. Profiling must be active
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
  void PollOnce(std::unique_lock<std::mutex>& lock, HeapProfiler& profiler, bool full);
  // The allocator's allocated bytes: jemalloc's stats.allocated, else its
  // summary (glibc: mallinfo2).
  Result<uint64_t> AllocatedBytes() const;
  // Whether the cgroup's usage calls for a capture now; refreshes `limit`
  // (only its usage unless `full`).
  bool NearLimitCaptureDue(std::optional<CgroupMemoryLimit>& limit, uint32_t next_percent,
                           bool full);
  void Capture(HeapProfiler& profiler, CaptureInfo info);
  void Changed();
  void StartThreadLocked();
  static void LogArmed(const CaptureSettings& settings, uint64_t allocated,
                       const std::optional<CgroupMemoryLimit>& limit);

  const Allocator& allocator_;
  const std::chrono::milliseconds poll_;
  StateChanges* const changes_;  // may be null
  CaptureKeeper keeper_;
  std::mutex lifecycle_mu_;  // Arm/Disarm: starting and joining the thread
  std::thread thread_;       // guarded by lifecycle_mu_
  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;        // guarded by mu_: the thread has not left its loop
  bool armed_ = false;          // guarded by mu_
  CaptureSettings settings_;    // guarded by mu_
  uint64_t high_water_ = 0;     // guarded by mu_
  // Set at Arm: the allocator's profiler does not change while it lives.
  HeapProfiler* profiler_ = nullptr;  // guarded by mu_
  uint64_t arm_generation_ = 0; // guarded by mu_: bumped by each Arm
  std::optional<CgroupMemoryLimit> limit_;  // guarded by mu_: near-limit capture's level
  uint32_t next_near_percent_ = 0;          // guarded by mu_
  bool close_to_limit_ = false;             // guarded by mu_: poll the cgroup faster
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_CAPTURE_WATCHER_H_
