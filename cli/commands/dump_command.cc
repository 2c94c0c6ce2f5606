#include "cli/commands/dump_command.h"

#include <memory>
#include <optional>
#include <utility>


#include "cli/client/dump_transfer.h"
#include "cli/collect/captured_dump.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/periodic_dump.h"
#include "cli/commands/option_validators.h"
#include "cli/commands/target_flags.h"
#include "cli/io/dump_file_name.h"
#include "cli/io/human_format.h"
#include "cli/targets/target_selection.h"
#include "common/duration.h"

namespace memprof::cli {
namespace {

constexpr char kStdout[] = "-";
constexpr char kDumpExamples[] =
    "Examples:\n"
    "  memprofctl dump --pid 1234 --out profile.heap\n"
    "  memprofctl dump --pid 1234 --out - | gzip > profile.heap.gz\n"
    "  memprofctl dump --pid 1234 --format svg --out heap.svg   # flame graph, symbolized here\n"
    "  memprofctl dump --pid 1234 --every 5m --count 12 --out-dir /var/tmp/heaps\n"
    "  memprofctl dump --pid 1234 --every 1m --out-dir heaps --json   # until Ctrl-C\n"
    "  memprofctl dump --all --out-dir heaps --json    # one file and one JSON line per agent\n"
    "  memprofctl dump --pid 1234 --captured --out-dir heaps   # the peak captures held\n"
    "  memprofctl dump --pid 1234 --captured --follow --out-dir heaps   # each as it is taken\n"
    "  memprofctl report profile.heap --top 20\n";

DumpDestination Destination(const DumpOptions& options) {
  DumpDestination destination{options.target.selector(), options.out, options.format,
                              options.target.json};
  destination.existing = ExistingFileFor(options.force);
  return destination;
}

void Report(const DumpOptions& options, const DumpSummary& summary, pid_t pid,
            const Console& console) {
  if (options.target.json) {
    console.out << DumpSummaryToJson(summary, pid, options.out).dump(2) << '\n';
    return;
  }
  const std::string where = options.out == kStdout ? std::string("stdout") : options.out;
  console.notes() << "pid " << pid << ": wrote " << FormatBytes(summary.size_bytes)
                  << " heap profile to " << where << " (sha256 " << summary.sha256_hex << ")\n";
}

}  // namespace

CLI::App* RegisterDumpCommand(CLI::App& app, DumpOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "dump", "Stream a heap profile (jemalloc heap_v2) from the process into a file");
  AddPidOption(*cmd, options.target);
  CLI::Option* out =
      cmd->add_option("-o,--out", options.out,
                      "File to write (created atomically; verified by size and SHA-256), "
                      "or - for stdout")
          ->type_name("FILE|-");
  AddForceFlag(*cmd, options.force, out);
  CLI::Option* out_dir =
      cmd->add_option("--out-dir", options.out_dir,
                      "Directory to write into, under generated names "
                      "{host}-{pid}-{UTC time}.heap (or the --format's extension); "
                      "existing files are never overwritten")
          ->type_name("DIR")
          ->excludes(out);
  CLI::Option* every =
      cmd->add_option("--every", options.every,
                      "Dump periodically, e.g. 30s, 5m, 1h (1s to 24h); needs --out-dir; "
                      "runs until Ctrl-C/SIGTERM unless --count is given")
          ->check(DurationValidator(kMinDumpEvery, kMaxDumpEvery))
          ->type_name("DURATION")
          ->needs(out_dir);
  cmd->add_option("--count", options.count, "With --every: stop after N dumps (1 to 1000000)")
      ->check(CountValidator(1, kMaxDumpCount))
      ->type_name("N")
      ->needs(every);
  CLI::Option* captured =
      cmd->add_flag("--captured", options.captured,
                    "Fetch every peak capture the agent holds (`activate --capture-growth`, "
                    "`--capture-near-limit`) into --out-dir, named "
                    "{host}-{pid}-{capture time}-capture{N}-{allocated}MiB.heap")
          ->needs(out_dir)
          ->excludes(every);
  cmd->add_flag("--follow", options.follow,
                "With --captured: keep going and write each capture as soon as it is taken, "
                "until the process ends (an OOM kill too), capturing is disarmed, or Ctrl-C")
      ->needs(captured);
  cmd->add_option("-f,--format", options.format,
                  "heap (the raw profile, default), or analyse it right away on this host: "
                  "text, collapsed, pprof, svg, json (see `memprofctl report`)")
      ->type_name("FORMAT");
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(kDumpExamples);
  return cmd;
}

namespace {

void ReportAnalysis(const DumpOptions& options, const DeliveredDump& dumped,
                    const Console& console) {
  if (options.target.json) {
    nlohmann::json j = DumpSummaryToJson(dumped.summary, dumped.pid, options.out);
    j["format"] = options.format;
    console.out << j.dump(2) << '\n';
    return;
  }
  console.notes() << "pid " << dumped.pid << ": wrote the " << options.format << " report of a "
                  << FormatBytes(dumped.summary.size_bytes) << " heap profile to "
                  << (options.out == kStdout ? std::string("stdout") : options.out) << '\n';
}

// dump --out-dir DIR [--every D [--count N]]
Result<void> RunDumpIntoDirectory(const DumpOptions& options, TargetDiscovery& discovery,
                                  ProfileClient& client, const Console& console,
                                  const std::stop_token& stop) {
  PeriodicDumpPlan plan;
  plan.out_dir = options.out_dir;
  plan.format = options.format;
  plan.json = options.target.json;
  if (!options.every.empty()) {
    auto every = ParseDuration(options.every, kMinDumpEvery, kMaxDumpEvery);
    if (!every) return Fail(every.error());
    plan.every = *every;
    plan.count = options.count;
  }
  if (auto ok = CheckOutputDirectory(options.out_dir); !ok) return ok;
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  plan.host = HostForFileNames(*target);
  return RunPeriodicDump(plan, *target, discovery, client, console, stop);
}

}  // namespace

Result<void> RunDump(const DumpOptions& options, TargetDiscovery& discovery, ProfileClient& client,
                     const Console& console, std::stop_token stop) {
  if (auto ok = CheckDumpFormat(options.format); !ok) return ok;
  if (options.captured) {
    if (options.format != kRawDumpFormat) {
      return Fail(ErrorCode::kInvalidArgument,
                  "--captured writes the raw profiles (--format heap); run `memprofctl report` "
                  "on the files it writes");
    }
    return RunCapturedDump(options.target.selector(), options.out_dir, options.target.json,
                           options.follow, discovery, client, console, stop);
  }
  if (!options.out_dir.empty()) {
    return RunDumpIntoDirectory(options, discovery, client, console, stop);
  }
  if (options.out.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "--out is required: a file, or - for stdout (or --out-dir DIR for "
                "timestamped files)");
  }
  auto dumped = DeliverDump(Destination(options), discovery, client, console, std::move(stop));
  if (!dumped) return Fail(dumped.error());
  if (options.format == kRawDumpFormat) {
    Report(options, dumped->summary, dumped->pid, console);
  } else {
    ReportAnalysis(options, *dumped, console);
  }
  return {};
}

namespace {

class DumpCommand final : public Command {
 public:
  CLI::App* Register(CLI::App& app) override { return RegisterDumpCommand(app, options_); }
  TargetOptions* target_options() override { return &options_.target; }
  SignalEnd signal_end() const override {
    return options_.every.empty() && !options_.follow ? SignalEnd::kDies
                                                      : SignalEnd::kEndsNormally;
  }
  Result<void> Run(const CommandContext& context) override { return RunWith(options_, context); }
  Result<void> CheckManyTargets() const override {
    if (options_.out_dir.empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "with several targets, dump writes one file per target: use --out-dir DIR");
    }
    if (!options_.every.empty()) return Fail(FollowsOneTarget("--every"));
    if (options_.follow) return Fail(FollowsOneTarget("--follow"));
    // Once, before any target is asked, not once per target.
    return CheckOutputDirectory(options_.out_dir);
  }
  Result<void> RunOnTarget(const Target& target, const CommandContext& context) const override {
    return RunWith(ForTarget(options_, target), context);
  }

 private:
  static Result<void> RunWith(const DumpOptions& options, const CommandContext& context) {
    return RunDump(options, *context.discovery, *context.client, context.console,
                   context.cancel);
  }
  DumpOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeDumpCommand() { return std::make_unique<DumpCommand>(); }

}  // namespace memprof::cli
