#include "agent/heap/allocation_recorder.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "agent/logging/agent_logger.h"
#include "agent/shared/agent_thread.h"
#include "agent/shared/owned_fd.h"
#include "common/duration.h"

namespace memprof::agent {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kMinWindow = std::chrono::seconds(1);
constexpr milliseconds kMaxWindow = std::chrono::hours(24);
// prof.active, when the window turns it on, stays on this much longer than
// the window by itself; the window's end turns it off before then.
constexpr milliseconds kActivationMargin = std::chrono::seconds(5);
// How often the records are counted: never closer than the first bound,
// never further apart than the second. A count costs a dump of every record
// (about 2 us each), so they come at half the time the rate seen so far
// leaves to the end-early mark: a steady rate costs about two dumps of the
// mark over the whole window, not one every few seconds.
constexpr milliseconds kMinPoll(100);
constexpr milliseconds kMaxPoll(10000);
constexpr milliseconds kFirstPoll(1000);

Error AlreadyOpen(uint64_t id, Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return Error(ErrorCode::kFailedPrecondition,
               "allocation window #" + std::to_string(id) +
                   " is already open in this process (it ends in " +
                   FormatDuration(std::max(left, milliseconds(0))) +
                   "); one runs at a time: try again when it has ended");
}

}  // namespace

AllocationRecorder::AllocationRecorder(const Allocator& allocator, ProfilingController& profiling,
                                       pid_t pid, StateChanges* changes)
    : AllocationRecorder(profiling, pid, [&allocator] { return RecentAllocationsOf(allocator); }) {
  changes_ = changes;
}

AllocationRecorder::AllocationRecorder(ProfilingController& profiling, pid_t pid,
                                       RecordsSource records)
    : profiling_(profiling), pid_(pid), records_source_(std::move(records)) {}

AllocationRecorder::~AllocationRecorder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  // A write under way completes first: the thread checks stopping_ only
  // between windows.
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  if (!open_) return;
  Restore(*open_);
  open_.reset();
}

Result<AllocationWindowInfo> AllocationRecorder::Open(const AllocationWindowRequest& request) {
  if (request.duration < kMinWindow || request.duration > kMaxWindow) {
    return Fail(ErrorCode::kInvalidArgument, "allocation window " +
                                                 FormatDuration(request.duration) + " is outside " +
                                                 FormatDuration(kMinWindow) + ".." +
                                                 FormatDuration(kMaxWindow));
  }
  const int64_t bound = request.record_bound == 0 ? kDefaultRecordBound : request.record_bound;
  if (bound < 1 || bound > kMaxRecordBound) {
    return Fail(ErrorCode::kInvalidArgument, "record bound " + std::to_string(bound) +
                                                 " is outside 1.." +
                                                 std::to_string(kMaxRecordBound));
  }
  auto records = records_source_();
  if (!records) return Fail(records.error());
  std::unique_lock lock(mu_);
  // The last window has ended but may not be put back yet: the new one's
  // records must not start before the old one's stop (jemalloc has one
  // record). So this waits for the write, and for a Fetch waiting on it to
  // take its profile (not to replace it under the Fetch), then opens: the
  // client asked after that window's end and is not refused for it.
  cv_.wait(lock, [this] { return !writing_ && fetching_ == 0; });
  if (open_) return Fail(AlreadyOpen(open_->id, open_->deadline));
  Window window;
  window.records = std::move(*records);
  window.start = Clock::now();
  window.deadline = window.start + request.duration;
  if (auto r = StartRecording(window, bound); !r) return Fail(r.error());
  window.id = ++last_id_;
  AllocationWindowFacts& facts = window.facts;
  facts.pid = pid_;
  facts.start_unix_ms = NowUnixMs();
  facts.requested_ms = request.duration.count();
  facts.clock = window.records->Clock();
  facts.start_ns = facts.clock.NowNs();
  facts.sample_interval_bytes = window.records->SampleInterval();
  facts.record_bound = bound;
  if (held_) {
    profiles_.Remove(held_->keeper_sequence);  // a newer window replaces an unfetched profile
    held_.reset();
  }
  const AllocationWindowInfo info{window.id, facts.start_unix_ms + facts.requested_ms, bound,
                                  facts.sample_interval_bytes, window.activation_generation != 0};
  next_poll_ = window.start + std::min(request.duration, kFirstPoll);
  open_ = std::move(window);
  if (!thread_running_) {
    if (thread_.joinable()) thread_.join();  // left its loop: needs no lock to end
    thread_running_ = true;
    thread_ = std::thread([this] { Loop(); });
  }
  cv_.notify_all();
  lock.unlock();
  Changed();
  Logger().info("allocation window #{} opened for {} (record bound {}{})", info.id,
                FormatDuration(request.duration), bound,
                info.profiling_activated ? ", sampling activated for it" : "");
  return info;
}

// Empties the record and sets the window's bound; turns sampling on for
// the window if it is off.
Result<void> AllocationRecorder::StartRecording(Window& window, int64_t bound) {
  if (auto r = window.records->Start(bound); !r) return Fail(r.error());
  if (window.records->SamplingActive()) return {};
  auto activated = profiling_.Activate(std::chrono::duration_cast<milliseconds>(
      window.deadline - window.start + kActivationMargin));
  if (!activated) {
    window.records->Stop();
    return Fail(activated.error());
  }
  window.activation_generation = activated->generation;
  return {};
}

Result<std::unique_ptr<HeapDump>> AllocationRecorder::Fetch(uint64_t id) {
  std::unique_lock lock(mu_);
  const auto ending = [&] {
    return (open_ && open_->id == id) || (writing_ && writing_->id == id);
  };
  if (ending()) {
    fetching_ = id;  // the thread ends it if it is open
    cv_.notify_all();
    cv_.wait(lock, [&] { return stopping_ || !ending(); });
    if (fetching_ == id) fetching_ = 0;
    cv_.notify_all();  // an Open may wait for the profile to be taken
  }
  if (!held_ || held_->id != id) {
    return Fail(ErrorCode::kNotFound,
                "allocation window #" + std::to_string(id) +
                    " has no profile in this process: it was never opened, was fetched "
                    "already, or was replaced by a newer window (an unfetched profile is kept " +
                    FormatDuration(kUnfetchedProfileLifetime) + " after its window ends)");
  }
  auto opened = profiles_.Open(held_->keeper_sequence);
  profiles_.Remove(held_->keeper_sequence);
  held_.reset();
  cv_.notify_all();
  lock.unlock();
  Changed();
  if (!opened) return Fail(opened.error());
  return std::make_unique<HeapDump>(std::move(opened->fd), opened->info.size_bytes, id,
                                    opened->info.created_unix_ms);
}

uint64_t AllocationRecorder::OpenWindow() const {
  std::lock_guard lock(mu_);
  if (open_) return open_->id;
  return writing_ ? writing_->id : 0;
}

AllocationRecorder::State AllocationRecorder::CurrentState() const {
  std::lock_guard lock(mu_);
  State state;
  if (open_) {
    state.open_window = open_->id;
    state.window_end_unix_ms = open_->facts.start_unix_ms + open_->facts.requested_ms;
    state.record_bound = open_->facts.record_bound;
  } else if (writing_) {  // open until its profile is held: never neither
    state.open_window = writing_->id;
    state.window_end_unix_ms = writing_->end_unix_ms;
    state.record_bound = writing_->record_bound;
  }
  if (held_) state.held_profile = held_->id;
  return state;
}

// On the recorder's thread, with `lock` held on entry and on return: takes
// the window out of open_, and without the lock writes its profile (before
// the records go) and puts back what the window found.
void AllocationRecorder::EndWindow(std::unique_lock<std::mutex>& lock, WindowEndReason reason) {
  Window window = std::move(*open_);
  open_.reset();
  writing_ = Writing{window.id, window.facts.start_unix_ms + window.facts.requested_ms,
                     window.facts.record_bound};
  lock.unlock();
  std::optional<Held> held = WriteProfile(window, reason);
  Restore(window);
  lock.lock();
  held_ = held;
  writing_.reset();
  cv_.notify_all();
  lock.unlock();
  Changed();
  lock.lock();
}

void AllocationRecorder::Changed() {
  if (changes_ != nullptr) changes_->Changed();
}

// The window's profile into a memfd kept in profiles_; nullopt: none (said
// in the log).
std::optional<AllocationRecorder::Held> AllocationRecorder::WriteProfile(Window& window,
                                                                         WindowEndReason reason) {
  window.facts.end_ns = window.facts.clock.NowNs();
  window.facts.created_unix_ms = NowUnixMs();
  window.facts.ended_by = reason;
  // A full record means the oldest were dropped to make room: the profile
  // then starts at its first record, not at the window's start.
  auto count = window.records->Held();
  window.facts.records_lost = count && count->lost;
  auto fd = CreateDumpFile();
  if (!fd) {
    Logger().warn("allocation window #{} ended without a profile: {}", window.id,
                  fd.error().message);
    return std::nullopt;
  }
  const int number = profiles_.BeginCapture(OwnedFd(std::move(*fd)));
  auto size = WriteAllocationProfile(*window.records, window.facts, number);
  if (!size) {
    profiles_.Abandon(number);
    Logger().warn("allocation window #{} ended without a profile: {}", window.id,
                  size.error().message);
    return std::nullopt;
  }
  CaptureInfo info;
  info.created_unix_ms = window.facts.created_unix_ms;
  info.size_bytes = *size;
  const CaptureInfo added = profiles_.Add(number, info);
  Logger().info("allocation window #{} ended ({}): profile of {} bytes", window.id,
                WindowEndReasonName(reason), *size);
  return Held{window.id, added.sequence, Clock::now() + kUnfetchedProfileLifetime};
}

void AllocationRecorder::Restore(const Window& window) {
  window.records->Stop();
  if (window.activation_generation == 0) return;
  // Only if nobody changed the activation since: theirs stands.
  if (auto r = profiling_.Deactivate(window.activation_generation); !r) {
    Logger().info("profiling left as it is after the allocation window: {}", r.error().message);
  }
}

// The next count comes before the records can reach the end-early mark at
// the rate seen so far (half the time it would take), within the poll bounds.
Clock::time_point AllocationRecorder::NextPollLocked(int64_t count) const {
  const auto now = Clock::now();
  const auto elapsed = std::chrono::duration_cast<milliseconds>(now - open_->start);
  const int64_t mark = open_->facts.record_bound * kBoundEndPerMille / 1000;
  milliseconds wait = kFirstPoll;  // nothing recorded yet: a count costs nothing
  if (count > 0 && elapsed.count() > 0) {
    const double per_ms = static_cast<double>(count) / static_cast<double>(elapsed.count());
    wait = milliseconds(static_cast<int64_t>(static_cast<double>(mark - count) / per_ms / 2));
  }
  return now + std::clamp(wait, kMinPoll, kMaxPoll);
}

// Why the open window ends now, if it does: a Fetch asked, its duration is
// over, or (at a count) its records near the bound.
std::optional<WindowEndReason> AllocationRecorder::DueEndLocked(Clock::time_point now) {
  if (fetching_ == open_->id) return WindowEndReason::kClient;
  if (now >= open_->deadline) return WindowEndReason::kDuration;
  if (now < next_poll_) return std::nullopt;
  auto held = open_->records->Held();
  const int64_t mark = open_->facts.record_bound * kBoundEndPerMille / 1000;
  if (held && held->records >= mark) return WindowEndReason::kBound;
  next_poll_ = NextPollLocked(held ? held->records : 0);
  return std::nullopt;
}

void AllocationRecorder::Loop() {
  BecomeAgentThread("allocs");
  std::unique_lock lock(mu_);
  while (!stopping_ && (open_ || held_)) {
    const bool asked = open_ && fetching_ == open_->id;
    const auto wake = open_ ? std::min(open_->deadline, next_poll_) : held_->expires;
    if (!asked) cv_.wait_until(lock, wake);
    if (stopping_) break;
    const auto now = Clock::now();
    if (open_) {
      if (auto reason = DueEndLocked(now)) EndWindow(lock, *reason);
    } else if (held_ && now >= held_->expires) {
      Logger().info("allocation window #{}: its profile was not fetched within {}; dropped",
                    held_->id, FormatDuration(kUnfetchedProfileLifetime));
      profiles_.Remove(held_->keeper_sequence);
      held_.reset();
      lock.unlock();
      Changed();
      lock.lock();
    }
  }
  thread_running_ = false;
}

}  // namespace memprof::agent
