#include "cli/commands/activate_command.h"

#include "cli/client/capture_format.h"
#include "cli/client/profiling_format.h"
#include "cli/commands/option_validators.h"
#include "cli/commands/target_flags.h"
#include "cli/io/byte_size.h"
#include "cli/io/human_format.h"
#include "common/duration.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

// The request for the options; kInvalidArgument for a bad --for or --sample-interval.
Result<memprof::v1::ActivateRequest> MakeRequest(const ActivateOptions& options,
                                                 uint64_t& requested_interval) {
  memprof::v1::ActivateRequest request;
  if (!options.duration.empty()) {
    auto duration = ParseDuration(options.duration);
    if (!duration) return Fail(ErrorCode::kInvalidArgument, "--for: " + duration.error().message);
    request.set_duration_ms(static_cast<uint64_t>(duration->count()));
  }
  if (!options.sample_interval.empty()) {
    auto interval = ParseSampleInterval(options.sample_interval);
    if (!interval) {
      return Fail(ErrorCode::kInvalidArgument, "--sample-interval: " + interval.error().message);
    }
    requested_interval = interval->requested_bytes;
    request.set_sample_interval_bytes(interval->bytes);
  }
  request.set_reset(options.reset);
  if (!options.capture_growth.empty()) {
    auto growth = ParseCaptureGrowth(options.capture_growth);
    if (!growth) {
      return Fail(ErrorCode::kInvalidArgument, "--capture-growth: " + growth.error().message);
    }
    request.set_capture_growth_bytes(*growth);
  }
  if (!options.capture_near_limit.empty()) {
    auto percent = ParseNearLimitShare(options.capture_near_limit);
    if (!percent) {
      return Fail(ErrorCode::kInvalidArgument,
                  "--capture-near-limit: " + percent.error().message);
    }
    request.set_capture_near_limit_percent(*percent);
  }
  const bool capture = request.capture_growth_bytes() != 0 ||
                       request.capture_near_limit_percent() != 0;
  if (capture) {
    request.set_capture_keep(options.keep == 0 ? kDefaultCaptureKeep : options.keep);
  } else if (options.keep != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "activate: --keep needs --capture-growth SIZE or --capture-near-limit PERCENT");
  }
  return request;
}

// An agent from before sampling control ignores the new request fields and
// answers no interval: say so rather than pretend the samples were reset.
Result<void> CheckSamplingSupported(const memprof::v1::ActivateRequest& request,
                                    const memprof::v1::ActivateResponse& response,
                                    const Target& target) {
  if (request.capture_growth_bytes() != 0 && !response.has_capture()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "the memprof agent of " + DescribeTarget(target) +
                    " is too old for --capture-growth (upgrade the agent); profiling was "
                    "activated, but peak capture is not armed");
  }
  if (request.capture_near_limit_percent() != 0 &&
      response.capture().near_limit_percent() == 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "the memprof agent of " + DescribeTarget(target) +
                    " is too old for --capture-near-limit (upgrade the agent); profiling was "
                    "activated, but near-limit capture is not armed");
  }
  const bool asked = request.sample_interval_bytes() != 0 || request.reset();
  if (!asked || response.sample_interval_bytes() != 0) return {};
  return Fail(ErrorCode::kFailedPrecondition,
              "the memprof agent of " + DescribeTarget(target) +
                  " is too old for --sample-interval and --reset (upgrade the agent); profiling "
                  "was activated, but no samples were discarded and the interval did not change");
}

}  // namespace

namespace {

void AddCaptureOptions(CLI::App& cmd, ActivateOptions& options) {
  CLI::Option* growth =
      cmd.add_option("--capture-growth", options.capture_growth,
                     "Peak capture: the agent takes a heap profile into its own memory each "
                     "time allocated bytes grow SIZE past the previous high-water mark "
                     "(1 MiB to 1024 GiB, e.g. 100MiB, 1GiB); fetch them with `dump --captured`")
          ->check(CaptureGrowthValidator())
          ->type_name("SIZE");
  CLI::Option* near =
      cmd.add_option("--capture-near-limit", options.capture_near_limit,
                     "Near-limit capture: the agent takes a heap profile when its memory "
                     "cgroup's usage reaches PERCENT of the limit (1% to 99%, e.g. 90%), then at "
                     "every further 2%, so that the profile from just before an OOM kill exists; "
                     "save them as they come with `dump --captured --follow --out-dir DIR`")
          ->check(NearLimitShareValidator())
          ->type_name("PERCENT");
  cmd.add_option("--keep", options.keep,
                 "With --capture-growth or --capture-near-limit: keep the last N captures, the "
                 "oldest dropped (1 to 16; default 4)")
      ->check(CountValidator(kMinCaptureKeep, kMaxCaptureKeep))
      ->type_name("N");
  (void)growth;
  (void)near;
}

}  // namespace

CLI::App* RegisterActivateCommand(CLI::App& app, ActivateOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "activate", "Start sampling allocations (jemalloc prof.active=true); idempotent");
  AddPidOption(*cmd, options.target);
  cmd->add_option("--for", options.duration,
                  "Stop sampling by itself after this long (1s to 24h, e.g. 30s, 5m, 1h30m); "
                  "default: until `memprofctl deactivate`")
      ->check(DurationValidator(kMinWindow, kMaxWindow))
      ->type_name("DURATION");
  cmd->add_option("--sample-interval", options.sample_interval,
                  "Sample once every SIZE allocated bytes on average (1 B to 1 GiB, e.g. 4096, "
                  "128KiB, 1MiB; rounded to the nearest power of two). A new interval DISCARDS "
                  "the samples collected so far (jemalloc prof.reset)")
      ->check(SampleIntervalValidator())
      ->type_name("SIZE");
  cmd->add_flag("--reset", options.reset,
                "DISCARD every sample collected so far (jemalloc prof.reset), then activate. "
                "Only --reset and a new --sample-interval discard samples; deactivate keeps them");
  AddCaptureOptions(*cmd, options);
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(
      "Examples:\n"
      "  memprofctl activate --pid 1234            # until deactivated\n"
      "  memprofctl activate --pid 1234 --for 5m   # the agent stops sampling after 5 minutes\n"
      "  memprofctl activate --pid 1234 --sample-interval 128KiB   # finer; discards samples\n"
      "  memprofctl activate --pid 1234 --reset    # start afresh: discards samples so far\n"
      "  memprofctl activate --pid 1234 --capture-growth 100MiB --keep 4   # peak capture\n"
      "  memprofctl activate --pid 1234 --capture-near-limit 90%   # before an OOM kill\n");
  return cmd;
}

Result<void> RunActivate(const ActivateOptions& options, TargetDiscovery& discovery,
                         ProfileClient& client, std::ostream& out) {
  uint64_t requested_interval = 0;
  auto request = MakeRequest(options, requested_interval);
  if (!request) return Fail(request.error());
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto response = client.Activate(*target, *request);
  if (!response) return Fail(response.error());
  if (auto ok = CheckSamplingSupported(*request, *response, *target); !ok) return ok;
  if (options.target.json) {
    out << ActivationToJson(*response, target->pid, requested_interval).dump(2) << '\n';
    return {};
  }
  out << DescribeActivation(*response, target->pid, std::chrono::system_clock::now()) << '\n';
  const std::string sampling =
      DescribeSampling(*response, target->pid, requested_interval, options.reset);
  if (!sampling.empty()) out << sampling << '\n';
  const std::string capture =
      DescribeCaptureArming(*response, target->pid,
                            request->capture_growth_bytes() != 0 ||
                                request->capture_near_limit_percent() != 0);
  if (!capture.empty()) out << capture << '\n';
  return {};
}

std::string DescribeCaptureArming(const memprof::v1::ActivateResponse& response, pid_t pid,
                                  bool requested) {
  if (!requested) return "";
  return "pid " + std::to_string(pid) + ": peak capture " +
         DescribeCaptureState(response.capture());
}

std::string DescribeActivation(const memprof::v1::ActivateResponse& response, pid_t pid,
                               std::chrono::system_clock::time_point now) {
  const std::string who = "pid " + std::to_string(pid) + ": ";
  const std::string until = DescribeWindowEnd(response.current().window_end_unix_ms(), now);
  if (!response.previous().active()) {
    return who + "profiling activated (was inactive), " + until;
  }
  if (response.window_replaced()) {
    const int64_t old_end = response.previous().window_end_unix_ms();
    const std::string old_window =
        old_end == 0 ? std::string("the previous window")
                     : "the previous window (until " + FormatLocalTime(old_end) + ")";
    return who + "profiling already active; " + old_window + " was replaced, now active " + until;
  }
  return who + "profiling already active, " + until;
}

std::string DescribeSampling(const memprof::v1::ActivateResponse& response, pid_t pid,
                             uint64_t requested_bytes, bool reset_requested) {
  if (requested_bytes == 0 && !reset_requested) return "";
  const uint64_t now = response.sample_interval_bytes();
  const uint64_t was = response.previous_sample_interval_bytes();
  std::string text = "pid " + std::to_string(pid) + ": ";
  if (requested_bytes != 0 && requested_bytes != now) {
    text += "--sample-interval " + std::to_string(requested_bytes) + " bytes rounded to " +
            std::to_string(now) + " bytes (jemalloc samples at powers of two); ";
  }
  const std::string interval =
      FormatBytes(now) + (now >= 1024 ? " (" + std::to_string(now) + " bytes)" : "");
  if (!response.samples_reset()) {
    return text + "sample interval already " + interval + "; samples collected so far are kept";
  }
  text += now == was ? "sample interval unchanged, " + interval
                     : "sample interval now " + interval + ", was " + FormatBytes(was);
  return text + "; the samples collected so far were discarded (prof.reset)";
}

nlohmann::json ActivationToJson(const memprof::v1::ActivateResponse& response, pid_t pid,
                                uint64_t requested_sample_interval_bytes) {
  return {{"schema_version", kActivateJsonVersion},
          {"pid", pid},
          {"previous", ProfilingStateToJson(response.previous())},
          {"current", ProfilingStateToJson(response.current())},
          {"window_replaced", response.window_replaced()},
          {"sample_interval_bytes", response.sample_interval_bytes()},
          {"previous_sample_interval_bytes", response.previous_sample_interval_bytes()},
          {"requested_sample_interval_bytes", requested_sample_interval_bytes},
          {"samples_reset", response.samples_reset()},
          {"capture", CaptureStateToJson(response.capture())},
          {"activation_generation", response.activation_generation()}};
}

namespace {

class ActivateCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterActivateCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  Result<void> Run(const CommandContext& context) override { return RunWith(options_, context); }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunWith(ForTarget(options_, target), context);
  }

 private:
  static Result<void> RunWith(const ActivateOptions& options, const CommandContext& context) {
    return RunActivate(options, *context.discovery, *context.client, context.console.out);
  }
  ActivateOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeActivateCommand() { return std::make_unique<ActivateCommand>(); }

}  // namespace memprof::cli
