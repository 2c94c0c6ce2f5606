#include "cli/commands/profile_command.h"

#include <memory>
#include <utility>

#include "cli/collect/allocation_window.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/periodic_dump.h"
#include "cli/collect/profile_outcome.h"
#include "cli/collect/profile_window.h"
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
    auto probe = AtomicFileWriter::Create(options.out, ExistingFileFor(options.force));
    if (!probe) return Fail(probe.error());
  }
  return *duration;
}

// The summary on console.err, or --json on console.out.
void Print(const ProfileOutcome& outcome, bool json, const Console& console) {
  if (json) {
    console.out << ProfileOutcomeToJson(outcome).dump(2) << '\n';
    if (!outcome.restore_error.empty()) {  // the human summary says it in its own words
      Log().warn("pid {}: could not put the profiling state back: {}", outcome.pid,
                 outcome.restore_error);
    }
    if (outcome.restore_skipped) {  // as the human summary's second line
      Log().warn("{}", DescribeSkippedRestore(outcome, std::chrono::system_clock::now()));
    }
  } else {
    console.notes() << DescribeProfile(outcome, std::chrono::system_clock::now()) << '\n';
  }
}

Result<void> RunAllocations(const ProfileOptions& options, milliseconds duration,
                            TargetDiscovery& discovery, ProfileClient& client,
                            const Console& console, const ProfileRuntime& runtime) {
  AllocationWindowRequest request;
  request.target = options.target.selector();
  request.duration = duration;
  request.record_bound = options.record_bound;
  request.out = options.out;
  request.out_dir = options.out_dir;
  request.format = options.format;
  request.existing = ExistingFileFor(options.force);
  auto outcome = RunAllocationWindow(request, discovery, client, console, runtime);
  if (!outcome) return Fail(outcome.error());
  if (options.target.json) {
    console.out << AllocationOutcomeToJson(*outcome).dump(2) << '\n';
  } else {
    console.notes() << DescribeAllocationOutcome(*outcome) << '\n';
  }
  return {};
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
  AddForceFlag(*cmd, options.force, out);
  cmd->add_option("--out-dir", options.out_dir,
                  "Or write into DIR as {host}-{pid}-{UTC time}.heap (or the --format's "
                  "extension); needed with several targets")
      ->type_name("DIR")
      ->excludes(out);
  cmd->add_option("-f,--format", options.format,
                  "heap (the raw profile, default), or analyse it right away on this host: "
                  "text, collapsed, pprof, svg, json (as `memprofctl dump --format`)")
      ->type_name("FORMAT");
  CLI::Option* allocations = cmd->add_flag(
      "--allocations", options.allocations,
      "An allocation profile instead of a heap profile: what was allocated during the window, "
      "what of it was freed (and after how long) and what survived (jemalloc only)");
  cmd->add_option("--record-bound", options.record_bound,
                  "With --allocations: most sampled allocations the agent records (default "
                  "100000, about 100 bytes each in the process); the window ends early near it")
      ->check(CLI::Range(uint64_t{1}, uint64_t{10000000}))
      ->needs(allocations)
      ->type_name("N");
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
      "  memprofctl profile --all --duration 1m --out-dir heaps --json   # every local agent\n"
      "  memprofctl profile --pid 1234 --duration 30s --allocations --out p.allocs\n"
      "  memprofctl report p.allocs --lifetimes     # what churns, what survives\n");
  return cmd;
}

Result<void> RunProfile(const ProfileOptions& options, TargetDiscovery& discovery,
                        ProfileClient& client, const Console& console,
                        const ProfileRuntime& runtime) {
  auto duration = Validate(options);
  if (!duration) return Fail(duration.error());
  if (options.allocations) return RunAllocations(options, *duration, discovery, client, console, runtime);
  ProfileWindowRequest request{
      options.target.selector(), *duration,      options.out,
      options.out_dir,           options.format, ExistingFileFor(options.force)};
  auto outcome = RunProfileWindow(request, discovery, client, console, runtime);
  if (!outcome) return Fail(outcome.error());
  Print(*outcome, options.target.json, console);
  return {};
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
