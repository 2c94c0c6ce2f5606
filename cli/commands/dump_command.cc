#include "cli/commands/dump_command.h"

#include <optional>
#include <utility>

#include <fstream>

#include "cli/client/dump_transfer.h"
#include "cli/collect/periodic_dump.h"
#include "cli/commands/option_validators.h"
#include "cli/commands/report_command.h"
#include "cli/commands/target_flags.h"
#include "cli/io/atomic_file_writer.h"
#include "cli/io/dump_file_name.h"
#include "cli/io/human_format.h"
#include "cli/report/report_pipeline.h"
#include "cli/targets/target_selection.h"
#include "common/duration.h"

namespace memprof::cli {
namespace {

constexpr char kStdout[] = "-";
constexpr char kRawFormat[] = "heap";
constexpr char kDumpExamples[] =
    "Examples:\n"
    "  memprofctl dump --pid 1234 --out profile.heap\n"
    "  memprofctl dump --pid 1234 --out - | gzip > profile.heap.gz\n"
    "  memprofctl dump --pid 1234 --format svg --out heap.svg   # flame graph, symbolized here\n"
    "  memprofctl dump --pid 1234 --every 5m --count 12 --out-dir /var/tmp/heaps\n"
    "  memprofctl dump --pid 1234 --every 1m --out-dir heaps --json   # until Ctrl-C\n"
    "  memprofctl dump --all --out-dir heaps --json    # one file and one JSON line per agent\n"
    "  memprofctl report profile.heap --top 20\n";

// Where the data goes: the temp file of FILE, or stdout.
class DumpOutput {
 public:
  explicit DumpOutput(std::ostream& out) : stdout_(&out) {}
  explicit DumpOutput(AtomicFileWriter file) : stdout_(nullptr), file_(std::move(file)) {}

  Result<void> Write(std::string_view data) {
    written_ += data.size();
    if (file_) return file_->Write(data);
    stdout_->write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!*stdout_) return Fail(ErrorCode::kInternal, "cannot write the heap profile to stdout");
    return {};
  }

  Result<void> Commit() {
    if (file_) return file_->Commit();
    if (!stdout_->flush()) return Fail(ErrorCode::kInternal, "cannot write to stdout");
    return {};
  }

  // What a failure means for the output, once data has started to flow:
  // "FILE was not written" / "the data written to stdout is not a valid profile".
  std::string FailureNote(const Error& error, const std::string& path) const {
    const bool started =
        written_ > 0 || error.code == ErrorCode::kDataLoss || error.code == ErrorCode::kCancelled;
    if (!started) return "";
    return file_ ? path + " was not written" : "the data written to stdout is not a valid profile";
  }

 private:
  std::ostream* stdout_;
  uint64_t written_ = 0;
  std::optional<AtomicFileWriter> file_;
};

Result<DumpOutput> OpenOutput(const DumpOptions& options, std::ostream& out) {
  if (options.out == kStdout) {
    if (options.target.json) {
      return Fail(ErrorCode::kInvalidArgument,
                  "--json cannot be combined with --out - (the profile itself goes to stdout)");
    }
    return DumpOutput(out);
  }
  auto file = AtomicFileWriter::Create(options.out);
  if (!file) return Fail(file.error());
  return DumpOutput(std::move(*file));
}

Error WithNote(Error error, const std::string& note) {
  if (error.code == ErrorCode::kCancelled) error.message = "dump interrupted";
  if (!note.empty()) error.message += "; " + note;
  return error;
}

Result<DumpSummary> Stream(const Target& target, ProfileClient& client, DumpOutput& output,
                           const std::stop_token& stop) {
  return StreamDump(
      target, client, [&output](std::string_view data) { return output.Write(data); }, stop);
}

void Report(const DumpOptions& options, const DumpSummary& summary, pid_t pid,
            const Console& console) {
  if (options.target.json) {
    console.out << DumpSummaryToJson(summary, pid, options.out).dump(2) << '\n';
    return;
  }
  const std::string where = options.out == kStdout ? std::string("stdout") : options.out;
  console.err << "pid " << pid << ": wrote " << FormatBytes(summary.size_bytes)
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
  cmd->add_option("-f,--format", options.format,
                  "heap (the raw profile, default), or analyse it right away on this host: "
                  "text, collapsed, pprof, svg, json (see `memprofctl report`)")
      ->type_name("FORMAT");
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(kDumpExamples);
  return cmd;
}

namespace {

// Resolves the target and streams its profile into `options.out`.
Result<DeliveredDump> DumpToOutput(const DumpOptions& options, TargetDiscovery& discovery,
                                ProfileClient& client, std::ostream& out,
                                const std::stop_token& stop) {
  auto output = OpenOutput(options, out);
  if (!output) return Fail(output.error());
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto summary = Stream(*target, client, *output, stop);
  auto fail = [&](const Error& e) {
    return Fail(WithNote(e, output->FailureNote(e, options.out)));
  };
  if (!summary) return fail(summary.error());
  if (auto committed = output->Commit(); !committed) return fail(committed.error());
  return DeliveredDump{*summary, target->pid, target->local_pid()};
}

// dump --format F: the raw profile goes to a scratch file, the report of it
// to --out.
Result<DeliveredDump> DumpAndReport(const DumpOptions& options, report::Format format,
                                    TargetDiscovery& discovery, ProfileClient& client,
                                    const Console& console, const std::stop_token& stop) {
  if (options.out != kStdout) {  // fail on a bad --out before any work
    auto probe = AtomicFileWriter::Create(options.out);
    if (!probe) return Fail(probe.error());
  }
  auto scratch = OpenScratchFile();
  if (!scratch) return Fail(scratch.error());
  const std::string scratch_path = "/proc/self/fd/" + std::to_string(scratch->get());
  std::ofstream raw(scratch_path, std::ios::binary);
  DumpOptions raw_options = options;
  raw_options.out = kStdout;  // "stdout" here is the scratch stream
  raw_options.target.json = false;
  auto dumped = DumpToOutput(raw_options, discovery, client, raw, stop);
  if (!dumped) return Fail(dumped.error());
  raw.close();
  report::ReportRequest request;
  request.dump_path = scratch_path;
  request.format = format;
  request.pid = dumped->local_pid;
  if (auto r = WriteReport(request, options.out, console, false); !r) return Fail(r.error());
  return dumped;
}

void ReportAnalysis(const DumpOptions& options, const DeliveredDump& dumped,
                    const Console& console) {
  if (options.target.json) {
    nlohmann::json j = DumpSummaryToJson(dumped.summary, dumped.pid, options.out);
    j["format"] = options.format;
    console.out << j.dump(2) << '\n';
    return;
  }
  console.err << "pid " << dumped.pid << ": wrote the " << options.format << " report of a "
              << FormatBytes(dumped.summary.size_bytes) << " heap profile to "
              << (options.out == kStdout ? std::string("stdout") : options.out) << '\n';
}

Result<void> CheckFormat(const DumpOptions& options) {
  if (options.format == kRawFormat || report::ParseFormat(options.format)) return {};
  return Fail(ErrorCode::kInvalidArgument,
              "unknown dump format '" + options.format +
                  "' (valid: heap, text, collapsed, pprof, svg, json)");
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

Result<DeliveredDump> DeliverDump(const DumpOptions& options, TargetDiscovery& discovery,
                                  ProfileClient& client, const Console& console,
                                  std::stop_token stop) {
  if (options.format == kRawFormat) {
    return DumpToOutput(options, discovery, client, console.out, stop);
  }
  if (auto ok = CheckFormat(options); !ok) return Fail(ok.error());
  const auto format = report::ParseFormat(options.format);
  if (options.out == kStdout && options.target.json) {
    return Fail(ErrorCode::kInvalidArgument,
                "--json cannot be combined with --out - (the report itself goes to stdout)");
  }
  return DumpAndReport(options, *format, discovery, client, console, stop);
}

Result<void> RunDump(const DumpOptions& options, TargetDiscovery& discovery, ProfileClient& client,
                     const Console& console, std::stop_token stop) {
  if (auto ok = CheckFormat(options); !ok) return ok;
  if (!options.out_dir.empty()) {
    return RunDumpIntoDirectory(options, discovery, client, console, stop);
  }
  if (options.out.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "--out is required: a file, or - for stdout (or --out-dir DIR for "
                "timestamped files)");
  }
  auto dumped = DeliverDump(options, discovery, client, console, std::move(stop));
  if (!dumped) return Fail(dumped.error());
  if (options.format == kRawFormat) {
    Report(options, dumped->summary, dumped->pid, console);
  } else {
    ReportAnalysis(options, *dumped, console);
  }
  return {};
}

}  // namespace memprof::cli
