#include "cli/commands/profile_command.h"

#include <memory>
#include <utility>

#include "cli/collect/dump_delivery.h"
#include "cli/collect/periodic_dump.h"
#include "cli/collect/profile_outcome.h"
#include "cli/commands/option_validators.h"
#include "cli/commands/target_flags.h"
#include "cli/io/atomic_file_writer.h"
#include "cli/io/human_format.h"
#include "cli/io/logging.h"
#include "cli/report/report_pipeline.h"
#include "cli/targets/target_selection.h"
#include "common/duration.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

constexpr char kStdout[] = "-";
constexpr milliseconds kProgressTick(250);
constexpr size_t kProgressWidth = 30;

int64_t NowUnixMs() { return ToUnixMillis(std::chrono::system_clock::now()); }

// Everything that can be checked without the agent; returns the duration.
Result<milliseconds> Validate(const ProfileOptions& options) {
  auto duration = ParseDuration(options.duration);
  if (!duration) {
    return Fail(ErrorCode::kInvalidArgument, "--duration: " + duration.error().message);
  }
  if (options.format != kRawDumpFormat && !report::ParseFormat(options.format)) {
    return Fail(ErrorCode::kInvalidArgument,
                "unknown profile format '" + options.format +
                    "' (valid: heap, text, collapsed, pprof, svg, json)");
  }
  if (options.out.empty() == options.out_dir.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "--out is required: a file, or - for stdout (or --out-dir DIR for a generated "
                "name)");
  }
  if (!options.out_dir.empty()) {
    if (auto ok = CheckOutputDirectory(options.out_dir); !ok) return Fail(ok.error());
    return *duration;
  }
  if (options.out == kStdout && options.target.json) {
    return Fail(ErrorCode::kInvalidArgument,
                "--json cannot be combined with --out - (the profile itself goes to stdout)");
  }
  if (options.out != kStdout) {
    // Creates (and drops) the anonymous temp file: a bad --out fails now,
    // not after the whole window.
    auto probe = AtomicFileWriter::Create(options.out);
    if (!probe) return Fail(probe.error());
  }
  return *duration;
}

// One run of `profile`, step by step.
class ProfileRun {
 public:
  ProfileRun(const ProfileOptions& options, milliseconds duration, TargetDiscovery& discovery,
             ProfileClient& client, const Console& console, const ProfileRuntime& runtime)
      : options_(options),
        discovery_(discovery),
        client_(client),
        restore_client_(runtime.restore_client != nullptr ? *runtime.restore_client : client),
        console_(console),
        runtime_(runtime) {
    out_ = options.out;
    outcome_.format = options.format;
    outcome_.requested = duration;
  }

  Result<void> Run();

 private:
  Result<void> Start();
  Result<void> Activate(milliseconds window);
  WindowWaitResult Wait();
  Result<DeliveredDump> Dump();
  void Restore();
  Result<memprof::v1::ProfilingState> SendRestore(const RestoreStep& step);
  bool KeepMovedState(const RestoreStep& step);
  Error Aborted(const std::string& what_was_lost) const;
  void Print() const;

  const ProfileOptions& options_;
  TargetDiscovery& discovery_;
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

Result<void> ProfileRun::Run() {
  if (auto started = Start(); !started) {
    if (activation_sent_ && started.error().code == ErrorCode::kCancelled) Restore();
    if (runtime_.abort.stop_requested()) return Fail(Aborted("nothing was written"));
    return started;
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
  Print();
  return {};
}

Result<void> ProfileRun::Start() {
  auto target = discovery_.Resolve(options_.target.selector());
  if (!target) return Fail(target.error());
  target_ = *target;
  outcome_.pid = target_.pid;
  if (!options_.out_dir.empty()) {
    out_ = UnusedDumpPath(options_.out_dir, HostForFileNames(target_), target_.pid,
                          std::chrono::system_clock::now(), options_.format);
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
  WindowTick tick;
  if (runtime_.progress) {
    tick = [this](milliseconds waited) {
      console_.err << '\r' << ProgressLine(waited, outcome_.requested, kProgressWidth)
                   << std::flush;
    };
    tick(milliseconds(0));
  }
  const WindowWaitResult waited =
      runtime_.wait(target_.local_pid(), outcome_.requested, runtime_.end_early, kProgressTick, tick);
  if (runtime_.progress) console_.err << "\r\033[K" << std::flush;  // clear the bar's line
  if (waited.end == WindowEnd::kEndedEarly) {
    console_.notes() << "pid " << target_.pid << ": interrupted: profiling window ended after "
                     << FormatElapsed(waited.waited) << " of "
                     << FormatDuration(outcome_.requested)
                     << "; dumping now (interrupt again to abort)\n"
                     << std::flush;
  }
  return waited;
}

Result<DeliveredDump> ProfileRun::Dump() {
  DumpDestination dump;
  dump.target.resolved = target_;
  dump.out = out_;
  dump.format = options_.format;
  auto delivered = DeliverDump(dump, discovery_, client_, console_, runtime_.abort);
  if (!delivered && runtime_.abort.stop_requested()) {
    return Fail(Aborted(out_ == kStdout ? "the data written to stdout is not a valid profile"
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

void ProfileRun::Print() const {
  if (options_.target.json) {
    console_.out << ProfileOutcomeToJson(outcome_).dump(2) << '\n';
    if (!outcome_.restore_error.empty()) {  // the human summary says it in its own words
      Log().warn("pid {}: could not put the profiling state back: {}", target_.pid,
                 outcome_.restore_error);
    }
    if (outcome_.restore_skipped) {  // as the human summary's second line
      Log().warn("{}", DescribeSkippedRestore(outcome_, std::chrono::system_clock::now()));
    }
  } else {
    console_.notes() << DescribeProfile(outcome_, std::chrono::system_clock::now()) << '\n';
  }
}

}  // namespace

CLI::App* RegisterProfileCommand(CLI::App& app, ProfileOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "profile", "Profile for a while: activate, wait, dump, and leave profiling as it was before");
  AddPidOption(*cmd, options.target);
  cmd->add_option("--duration", options.duration,
                  "How long to profile (1s to 24h, e.g. 30s, 5m, 1h30m)")
      ->required()
      ->check(DurationValidator(kMinWindow, kMaxWindow))
      ->type_name("DURATION");
  CLI::Option* out = cmd->add_option("-o,--out", options.out,
                                     "File to write (created atomically; verified by size and "
                                     "SHA-256), or - for stdout")
                         ->type_name("FILE|-");
  cmd->add_option("--out-dir", options.out_dir,
                  "Or write into DIR as {host}-{pid}-{UTC time}.heap (or the --format's "
                  "extension); needed with several targets")
      ->type_name("DIR")
      ->excludes(out);
  cmd->add_option("-f,--format", options.format,
                  "heap (the raw profile, default), or analyse it right away on this host: "
                  "text, collapsed, pprof, svg, json (as `memprofctl dump --format`)")
      ->type_name("FORMAT");
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(
      "Profiling is activated for the duration (unless it is already active for long enough)\n"
      "with a window the agent closes by itself 5s after the duration, so it stops even if\n"
      "memprofctl dies; afterwards it is switched off again, or left active as it was.\n"
      "If someone else activates or deactivates profiling during the window, their state\n"
      "is left as they set it, and the summary says so (exit code still 0).\n"
      "Ctrl-C or SIGTERM ends the window early and still writes the profile (exit 0);\n"
      "a second one aborts and writes nothing.\n\n"
      "Examples:\n"
      "  memprofctl profile --pid 1234 --duration 30s --out profile.heap\n"
      "  memprofctl profile --name '^redis' --duration 5m --format svg --out heap.svg\n"
      "  memprofctl profile --pid 1234 --duration 1m --out p.heap --json | jq .profiled_seconds\n"
      "  memprofctl profile --all --duration 1m --out-dir heaps --json   # every local agent\n");
  return cmd;
}

Result<void> RunProfile(const ProfileOptions& options, TargetDiscovery& discovery,
                        ProfileClient& client, const Console& console,
                        const ProfileRuntime& runtime) {
  auto duration = Validate(options);
  if (!duration) return Fail(duration.error());
  return ProfileRun(options, *duration, discovery, client, console, runtime).Run();
}

namespace {

class ProfileCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterProfileCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  SignalEnd signal_end() const override { return SignalEnd::kEndsEarly; }
  Result<void> Run(const CommandContext& context) override {
    return RunWith(options_, context, context.env.stderr_redraws && !context.console.quiet);
  }
  Result<void> CheckManyTargets() const override {
    if (options_.out_dir.empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "with several targets, profile writes one file per target: use --out-dir DIR");
    }
    // Before any window opens: a bad DIR would otherwise lose every profile.
    return CheckOutputDirectory(options_.out_dir);
  }
  Result<std::chrono::milliseconds> ExtraTimePerTarget() const override {
    auto duration = ParseDuration(options_.duration);
    if (!duration) {
      return Fail(ErrorCode::kInvalidArgument, "--duration: " + duration.error().message);
    }
    return *duration;
  }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunWith(ForTarget(options_, target), context, false);
  }

 private:
  // The first signal ends the window early (end_early); the second, or a
  // multi-target run's deadline, aborts (cancel). The state is restored
  // through a client that nothing cancels.
  static Result<void> RunWith(const ProfileOptions& options, const CommandContext& context,
                              bool progress) {
    auto restore_client = context.env.make_client(context.timeout, std::stop_token());
    ProfileRuntime runtime;
    runtime.end_early = context.end_early;
    runtime.abort = context.cancel;
    runtime.restore_client = restore_client.get();
    runtime.progress = progress;
    return RunProfile(options, *context.discovery, *context.client, context.console, runtime);
  }
  ProfileOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeProfileCommand() { return std::make_unique<ProfileCommand>(); }

}  // namespace memprof::cli
