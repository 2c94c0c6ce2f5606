#include "cli/commands/dump_command.h"

#include <optional>
#include <utility>

#include "cli/atomic_file_writer.h"
#include "cli/human_format.h"

namespace memprof::cli {
namespace {

constexpr char kStdout[] = "-";

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
  DumpReceiver receiver([&output](std::string_view data) { return output.Write(data); });
  auto streamed = client.Dump(
      target, memprof::v1::DumpRequest(),
      [&receiver](const memprof::v1::DumpChunk& chunk) { return receiver.OnChunk(chunk); });
  if (!streamed) return Fail(streamed.error());
  auto summary = receiver.Finish();
  if (!summary) return Fail(summary.error());
  if (stop.stop_requested()) return Fail(ErrorCode::kCancelled, "dump interrupted");
  return summary;
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
  cmd->add_option("-o,--out", options.out,
                  "File to write (created atomically; verified by size and SHA-256), "
                  "or - for stdout")
      ->required()
      ->type_name("FILE|-");
  AddJsonFlag(*cmd, options.target.json);
  cmd->footer(
      "Examples:\n"
      "  memprofctl dump --pid 1234 --out profile.heap\n"
      "  memprofctl dump --pid 1234 --out - | gzip > profile.heap.gz\n"
      "  jeprof --text /proc/1234/exe profile.heap\n");
  return cmd;
}

Result<void> RunDump(const DumpOptions& options, TargetDiscovery& discovery, ProfileClient& client,
                     const Console& console, std::stop_token stop) {
  auto output = OpenOutput(options, console.out);
  if (!output) return Fail(output.error());
  auto target = discovery.Resolve(options.target.selector());
  if (!target) return Fail(target.error());
  auto summary = Stream(*target, client, *output, stop);
  auto fail = [&](const Error& e) {
    return Fail(WithNote(e, output->FailureNote(e, options.out)));
  };
  if (!summary) return fail(summary.error());
  if (auto committed = output->Commit(); !committed) return fail(committed.error());
  Report(options, *summary, target->pid, console);
  return {};
}

nlohmann::json DumpSummaryToJson(const DumpSummary& summary, pid_t pid, const std::string& path) {
  return {{"pid", pid},
          {"path", path},
          {"size_bytes", summary.size_bytes},
          {"sha256", summary.sha256_hex},
          {"sample_interval_bytes", summary.sample_interval_bytes},
          {"created_unix_ms", summary.created_unix_ms}};
}

}  // namespace memprof::cli
