#ifndef MEMPROF_AGENT_HEAP_ALLOCATION_RECORDER_H_
#define MEMPROF_AGENT_HEAP_ALLOCATION_RECORDER_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "agent/allocators/allocator.h"
#include "agent/heap/allocation_profile_writer.h"
#include "agent/heap/capture_keeper.h"
#include "agent/heap/dump_streamer.h"
#include "agent/heap/profiling_controller.h"
#include "agent/heap/recent_allocations.h"
#include "agent/heap/state_changes.h"
#include "common/result.h"

namespace memprof::agent {

// Records allocations kept by the window: jemalloc's records (96 bytes each
// in jemalloc 5.3, plus the stacks they share) bound the memory a window can
// take in the process.
inline constexpr int64_t kDefaultRecordBound = 100000;
inline constexpr int64_t kMaxRecordBound = 10000000;
// The window ends early once this share (per mille) of the bound is used.
inline constexpr int64_t kBoundEndPerMille = 900;
// An allocation profile nobody fetched is dropped this long after its window ended.
inline constexpr std::chrono::minutes kUnfetchedProfileLifetime(10);

struct AllocationWindowRequest {
  std::chrono::milliseconds duration{0};  // 1 s .. 24 h
  int64_t record_bound = 0;               // 0: kDefaultRecordBound
};

struct AllocationWindowInfo {
  uint64_t id = 0;  // 1, 2, ... in this process
  int64_t end_unix_ms = 0;
  int64_t record_bound = 0;
  uint64_t sample_interval_bytes = 0;
  bool profiling_activated = false;  // sampling was off: the window turned it on for its length
};

// One allocation window at a time (`memprofctl profile --allocations`):
// every sampled allocation made during the window, and its free if it
// comes, is recorded (recent_allocations.h: jemalloc's
// experimental.prof_recent, or memprof's sampler's ring, bounded by the
// window's record bound); at the window's end the agent writes the records
// into an allocation profile (allocation_profile_writer.h) held in a memfd
// until a client fetches it, and puts back what it found: the record's bound
// (which frees the records) and whether sampling was on.
//
// The window ends by itself, whether or not the client that opened it is
// still there: at its end, early when the records near the bound (counted
// as often as the rate of sampling makes necessary), or when a client
// fetches it. A second window while one is open is refused
// (kFailedPrecondition).
//
// Fork: a child forked during a window does not go on recording (jemalloc's
// bound is put back there by an atfork handler, the sampler's ring is
// unmapped by its own). The held profile's memfd is closed in the child with
// the keeper's files (capture_keeper.h).
//
// Threading: one thread ("memprof-allocs") from a window's start until its
// profile is fetched or dropped. Thread-safe. Only that thread ends a
// window, whatever the reason: a Fetch of an open window asks it to (and
// waits on cv_ until the profile is held, the window ended without one, or
// the recorder is stopping). It writes the profile and puts back what the
// window found without holding mu_ (a write of a large bound takes seconds),
// so CurrentState() and OpenWindow() answer at once meanwhile, and show the
// window as still open until its profile is held. An Open() meanwhile waits
// for the write (and for a Fetch waiting on it to take the profile), so that
// the old window's records are put back before the new one's start; the
// destructor joins the thread, so a write under way completes first.
class AllocationRecorder {
 public:
  // Each change of what CurrentState() shows (a window opened or ended, its
  // profile held, handed over or dropped) is told to `changes` if given,
  // without mu_ held.
  AllocationRecorder(const Allocator& allocator, ProfilingController& profiling, pid_t pid,
                     StateChanges* changes = nullptr);
  // Where each window's records come from: RecentAllocationsOf(allocator)
  // above; a test wraps them to watch, or hold up, a window's end.
  using RecordsSource = std::function<Result<std::unique_ptr<RecentAllocations>>()>;
  AllocationRecorder(ProfilingController& profiling, pid_t pid, RecordsSource records);
  ~AllocationRecorder();
  AllocationRecorder(const AllocationRecorder&) = delete;
  AllocationRecorder& operator=(const AllocationRecorder&) = delete;

  // Opens a window. kFailedPrecondition: neither a jemalloc with profiling
  // nor memprof's sampler serves, a window already open, or jemalloc already
  // keeps every record (-1: a bound would drop them); kInvalidArgument: a
  // duration or bound out of range.
  [[nodiscard]] Result<AllocationWindowInfo> Open(const AllocationWindowRequest& request);
  // Ends window `id` now if it is still open (on the recorder's thread:
  // this waits for the profile to be written), and hands its profile over
  // (once: it is then dropped from the agent). kNotFound: no such profile.
  [[nodiscard]] Result<std::unique_ptr<HeapDump>> Fetch(uint64_t id);
  // The open window's id, or 0. A window whose profile is being written is
  // still open.
  uint64_t OpenWindow() const;
  struct State {
    uint64_t open_window = 0;  // 0: none
    int64_t window_end_unix_ms = 0;
    int64_t record_bound = 0;
    uint64_t held_profile = 0;  // 0: none
  };
  State CurrentState() const;

 private:
  struct Window {
    uint64_t id = 0;
    std::unique_ptr<RecentAllocations> records;
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point deadline;
    AllocationWindowFacts facts;
    uint64_t activation_generation = 0;  // non-zero: the window activated profiling
  };
  struct Held {
    uint64_t id = 0;
    uint64_t keeper_sequence = 0;
    std::chrono::steady_clock::time_point expires;
  };

  // The window being written: what CurrentState() shows of it meanwhile.
  struct Writing {
    uint64_t id = 0;
    int64_t end_unix_ms = 0;
    int64_t record_bound = 0;
  };

  Result<void> StartRecording(Window& window, int64_t bound);
  void EndWindow(std::unique_lock<std::mutex>& lock, WindowEndReason reason);
  void Changed();
  std::optional<Held> WriteProfile(Window& window, WindowEndReason reason);
  void Restore(const Window& window);
  std::chrono::steady_clock::time_point NextPollLocked(int64_t count) const;
  std::optional<WindowEndReason> DueEndLocked(std::chrono::steady_clock::time_point now);
  void Loop();

  ProfilingController& profiling_;
  const pid_t pid_;
  const RecordsSource records_source_;
  StateChanges* changes_ = nullptr;  // may be null; set at construction
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Window> open_;        // guarded by mu_
  std::optional<Writing> writing_;    // guarded by mu_; set while the thread writes
  std::optional<Held> held_;          // guarded by mu_
  std::chrono::steady_clock::time_point next_poll_;  // guarded by mu_
  uint64_t last_id_ = 0;              // guarded by mu_
  // The window a Fetch waits for (0: none): the thread ends it if it is
  // open, and an Open waits until the Fetch has taken its profile.
  uint64_t fetching_ = 0;             // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  bool thread_running_ = false;       // guarded by mu_
  std::thread thread_;
  CaptureKeeper profiles_{1};  // the held profile's memfd (fork-safe)
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_ALLOCATION_RECORDER_H_
