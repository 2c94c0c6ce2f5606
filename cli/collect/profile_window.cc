#include "cli/collect/profile_window.h"

#include "cli/client/target.h"
#include "cli/collect/periodic_dump.h"
#include "cli/io/console.h"
#include "cli/io/human_format.h"
#include "cli/io/logging.h"
#include "cli/targets/target_selection.h"
#include "common/duration.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kProgressTick(250);
constexpr size_t kProgressWidth = 30;

// One profiling window, step by step.
class ProfileRun {
 public:
  ProfileRun(const ProfileWindowRequest& request, const TargetDiscovery& discovery,
             ProfileClient& client, const Console& console, const ProfileRuntime& runtime)
      : request_(request),
        discovery_(discovery),
        client_(client),
        restore_client_(runtime.restore_client != nullptr ? *runtime.restore_client : client),
        console_(console),
        runtime_(runtime) {
    out_ = request.out;
    outcome_.format = request.format;
    outcome_.requested = request.duration;
  }

  Result<ProfileOutcome> Run();

 private:
  Result<void> Start();
  Result<void> Activate(milliseconds window);
  WindowWaitResult Wait();
  Result<DeliveredDump> Dump();
  void Restore();
  Result<memprof::v1::ProfilingState> SendRestore(const RestoreStep& step);
  bool KeepMovedState(const RestoreStep& step);
  Error Aborted(const std::string& what_was_lost) const;

  const ProfileWindowRequest& request_;
  const TargetDiscovery& discovery_;
  ProfileClient& client_;
  ProfileClient& restore_client_;
  const Console& console_;
  const ProfileRuntime& runtime_;
  Target target_;
  std::string out_;  // --out, or the file chosen in --out-dir
  ProfileOutcome outcome_;
  bool activation_sent_ = false;  // Activate was called (it may have worked even if cancelled)
  memprof::v1::ProfilingState opened_;  // the state after profile's own activation
};

Result<ProfileOutcome> ProfileRun::Run() {
  if (auto started = Start(); !started) {
    if (activation_sent_ && started.error().code == ErrorCode::kCancelled) Restore();
    if (runtime_.abort.stop_requested()) return Fail(Aborted("nothing was written"));
    return Fail(started.error());
  }
  const WindowWaitResult waited = Wait();
  outcome_.profiled = waited.waited;
  outcome_.ended_early = waited.end == WindowEnd::kEndedEarly;
  if (waited.end == WindowEnd::kTargetExited) {
    return Fail(ErrorCode::kNotFound,
                DescribeTarget(target_) + " exited during the profiling window, after " +
                    FormatElapsed(waited.waited) + " of " + FormatDuration(outcome_.requested) +
                    "; no profile was written");
  }
  auto dumped = Dump();
  Restore();
  if (!dumped) return Fail(dumped.error());
  outcome_.dump = dumped->summary;
  return outcome_;
}

Result<void> ProfileRun::Start() {
  auto target = discovery_.Resolve(request_.target);
  if (!target) return Fail(target.error());
  target_ = *target;
  outcome_.pid = target_.pid;
  if (!request_.out_dir.empty()) {
    out_ = UnusedDumpPath(request_.out_dir, HostForFileNames(target_), target_.pid,
                          std::chrono::system_clock::now(), request_.format);
  }
  outcome_.path = out_;
  auto status = client_.Status(target_);
  if (!status) return Fail(status.error());
  outcome_.previous.set_active(status->profiling_active());
  outcome_.previous.set_window_end_unix_ms(status->window_end_unix_ms());
  opened_ = outcome_.previous;
  const auto window = WindowToOpen(outcome_.previous, outcome_.requested, NowUnixMs());
  return window ? Activate(*window) : Result<void>();
}

Result<void> ProfileRun::Activate(milliseconds window) {
  memprof::v1::ActivateRequest request;
  request.set_duration_ms(static_cast<uint64_t>(window.count()));
  activation_sent_ = true;
  auto activated = client_.Activate(target_, request);
  if (!activated) return Fail(activated.error());
  opened_ = activated->current();
  outcome_.generation_opened = activated->activation_generation();
  outcome_.generation_left = outcome_.generation_opened;
  Log().info("pid {}: profiling window of {} opened", target_.pid, FormatDuration(window));
  return {};
}

WindowWaitResult ProfileRun::Wait() {
  const WindowWaitResult waited = WaitShowingProgress(runtime_, console_, target_.local_pid(),
                                                      outcome_.requested, runtime_.end_early);
  if (waited.end == WindowEnd::kEndedEarly) {
    console_.notes() << "pid " << target_.pid << ": interrupted: profiling window ended after "
                     << FormatElapsed(waited.waited) << " of " << FormatDuration(outcome_.requested)
                     << "; dumping now (interrupt again to abort)\n"
                     << std::flush;
  }
  return waited;
}

Result<DeliveredDump> ProfileRun::Dump() {
  DumpDestination dump;
  dump.target.resolved = target_;
  dump.out = out_;
  dump.format = request_.format;
  dump.existing = request_.existing;
  auto delivered = DeliverDump(dump, discovery_, client_, console_, runtime_.abort);
  if (!delivered && runtime_.abort.stop_requested()) {
    return Fail(Aborted(out_ == kStdoutPath ? "the data written to stdout is not a valid profile"
                                        : out_ + " was not written"));
  }
  return delivered;
}

void ProfileRun::Restore() {
  const RestoreStep step = PlanRestore(outcome_.previous, activation_sent_, NowUnixMs());
  outcome_.restore = step.kind;
  outcome_.restored = step.kind == RestoreStep::Kind::kNothing ? outcome_.previous : opened_;
  if (step.kind == RestoreStep::Kind::kNothing) return;
  auto now = SendRestore(step);
  if (now) {
    outcome_.restored = *now;
    return;
  }
  if (now.error().code == ErrorCode::kFailedPrecondition && KeepMovedState(step)) return;
  outcome_.restore_error = now.error().message;
}

// Puts the state back, on condition that nobody changed it since profile's
// own Activate (an agent that does not count generations, 0, restores
// unconditionally as before).
Result<memprof::v1::ProfilingState> ProfileRun::SendRestore(const RestoreStep& step) {
  if (step.kind == RestoreStep::Kind::kDeactivate) {
    memprof::v1::DeactivateRequest request;
    request.set_if_generation(outcome_.generation_opened);
    auto r = restore_client_.Deactivate(target_, request);
    if (!r) return Fail(r.error());
    outcome_.generation_left = r->activation_generation();
    return r->current();
  }
  memprof::v1::ActivateRequest request;
  request.set_duration_ms(static_cast<uint64_t>(step.window.count()));
  request.set_if_generation(outcome_.generation_opened);
  auto r = restore_client_.Activate(target_, request);
  if (!r) return Fail(r.error());
  outcome_.generation_left = r->activation_generation();
  return r->current();
}

// After a conditional restore was refused: true when the generation has
// moved, and the state found is then kept as `restored`. Someone else
// changed it (restore_skipped), unless it was the agent ending profile's own
// window by itself, which leaves the state a deactivation would have left.
bool ProfileRun::KeepMovedState(const RestoreStep& step) {
  if (outcome_.generation_opened == 0) return false;  // the refusal is about something else
  auto status = restore_client_.Status(target_);
  if (!status || status->activation_generation() == outcome_.generation_opened) return false;
  memprof::v1::ProfilingState found;
  found.set_active(status->profiling_active());
  found.set_window_end_unix_ms(status->window_end_unix_ms());
  outcome_.restored = found;
  outcome_.generation_left = status->activation_generation();
  if (step.kind == RestoreStep::Kind::kDeactivate &&
      WindowEndedByItself(opened_, outcome_.generation_opened, found,
                          status->activation_generation(), NowUnixMs())) {
    return true;
  }
  outcome_.restore_skipped = true;
  return true;
}

Error ProfileRun::Aborted(const std::string& what_was_lost) const {
  return Error(ErrorCode::kCancelled, "profile aborted by a second interrupt; " + what_was_lost);
}

}  // namespace

WindowWaitResult WaitShowingProgress(const ProfileRuntime& runtime, const Console& console,
                                     pid_t pid, milliseconds duration,
                                     const std::stop_token& end_early, const WindowTick& also) {
  auto draw = [&](milliseconds waited) {
    console.err << '\r' << ProgressLine(waited, duration, kProgressWidth) << std::flush;
  };
  WindowTick tick;
  if (runtime.progress || also) {
    tick = [&](milliseconds waited) {
      if (runtime.progress) draw(waited);
      if (also) also(waited);
    };
  }
  if (runtime.progress) draw(milliseconds(0));
  const WindowWaitResult waited = runtime.wait(pid, duration, end_early, kProgressTick, tick);
  if (runtime.progress) console.err << "\r\033[K" << std::flush;  // clear the bar's line
  return waited;
}

Result<ProfileOutcome> RunProfileWindow(const ProfileWindowRequest& request,
                                        const TargetDiscovery& discovery, ProfileClient& client,
                                        const Console& console, const ProfileRuntime& runtime) {
  return ProfileRun(request, discovery, client, console, runtime).Run();
}

}  // namespace memprof::cli
