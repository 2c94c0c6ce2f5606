#include "cli/collect/dump_delivery.h"

#include <fstream>
#include <optional>
#include <utility>

#include "cli/client/dump_transfer.h"
#include "cli/collect/report_writer.h"
#include "cli/io/atomic_file_writer.h"
#include "cli/io/console.h"

namespace memprof::cli {
namespace {

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

Result<DumpOutput> OpenOutput(const DumpDestination& destination, std::ostream& out) {
  if (destination.out == kStdoutPath) {
    if (destination.json) {
      return Fail(ErrorCode::kInvalidArgument,
                  "--json cannot be combined with --out - (the profile itself goes to stdout)");
    }
    return DumpOutput(out);
  }
  auto file = AtomicFileWriter::Create(destination.out, destination.existing);
  if (!file) return Fail(file.error());
  return DumpOutput(std::move(*file));
}

Error WithNote(Error error, const std::string& note) {
  if (error.code == ErrorCode::kCancelled) error.message = "dump interrupted";
  if (!note.empty()) error.message += "; " + note;
  return error;
}

// Resolves the target and streams its profile into `destination.out`.
Result<DeliveredDump> DumpToOutput(const DumpDestination& destination,
                                   const TargetDiscovery& discovery, ProfileClient& client,
                                   std::ostream& out, const std::stop_token& stop) {
  auto output = OpenOutput(destination, out);
  if (!output) return Fail(output.error());
  auto target = discovery.Resolve(destination.target);
  if (!target) return Fail(target.error());
  auto summary = StreamDump(
      *target, client, [&output](std::string_view data) { return output->Write(data); }, stop,
      destination.capture_sequence, destination.allocation_window);
  auto fail = [&](const Error& e) {
    return Fail(WithNote(e, output->FailureNote(e, destination.out)));
  };
  if (!summary) return fail(summary.error());
  if (auto committed = output->Commit(); !committed) return fail(committed.error());
  return DeliveredDump{*summary, target->pid, target->local_pid()};
}

// A report format: the raw profile goes to a scratch file, the report of it
// to `out`.
Result<DeliveredDump> DumpAndReport(const DumpDestination& destination, report::Format format,
                                    const TargetDiscovery& discovery, ProfileClient& client,
                                    const Console& console, const std::stop_token& stop) {
  if (destination.out != kStdoutPath) {  // fail on a bad --out before any work
    auto probe = AtomicFileWriter::Create(destination.out, destination.existing);
    if (!probe) return Fail(probe.error());
  }
  auto scratch = OpenScratchFile();
  if (!scratch) return Fail(scratch.error());
  const std::string scratch_path = "/proc/self/fd/" + std::to_string(scratch->get());
  std::ofstream raw(scratch_path, std::ios::binary);
  DumpDestination raw_destination = destination;
  raw_destination.out = kStdoutPath;  // "stdout" here is the scratch stream
  raw_destination.json = false;
  auto dumped = DumpToOutput(raw_destination, discovery, client, raw, stop);
  if (!dumped) return Fail(dumped.error());
  raw.close();
  report::ReportRequest request;
  request.dump_path = scratch_path;
  request.format = format;
  request.pid = dumped->local_pid;
  const ReportOutput output{destination.out, destination.existing};
  if (auto r = WriteReport(request, output, console, false); !r) return Fail(r.error());
  return dumped;
}

}  // namespace

Result<void> CheckDumpFormat(const std::string& format) {
  if (format == kRawDumpFormat || report::ParseFormat(format)) return {};
  return Fail(
      ErrorCode::kInvalidArgument,
      "unknown dump format '" + format + "' (valid: heap, text, collapsed, pprof, svg, json)");
}

Result<DeliveredDump> DeliverDump(const DumpDestination& destination,
                                  const TargetDiscovery& discovery, ProfileClient& client,
                                  const Console& console, std::stop_token stop) {
  if (destination.format == kRawDumpFormat) {
    return DumpToOutput(destination, discovery, client, console.out, stop);
  }
  if (auto ok = CheckDumpFormat(destination.format); !ok) return Fail(ok.error());
  const auto format = report::ParseFormat(destination.format);
  if (destination.out == kStdoutPath && destination.json) {
    return Fail(ErrorCode::kInvalidArgument,
                "--json cannot be combined with --out - (the report itself goes to stdout)");
  }
  return DumpAndReport(destination, *format, discovery, client, console, stop);
}

}  // namespace memprof::cli
