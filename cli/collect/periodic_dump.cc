#include "cli/collect/periodic_dump.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "cli/client/dump_transfer.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/run_end.h"
#include "cli/io/atomic_file_writer.h"
#include "cli/io/dump_file_name.h"
#include "cli/io/human_format.h"
#include "cli/io/logging.h"
#include "cli/report/report_pipeline.h"

namespace memprof::cli {
namespace {

constexpr int kMaxNameAttempts = 100;

struct WrittenDump {
  std::string path;
  DumpSummary summary;
};

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

std::string FileNameFor(const PeriodicDumpPlan& plan, pid_t pid,
                        std::chrono::system_clock::time_point time, int attempt) {
  return JoinPath(plan.out_dir,
                  DumpFileName(plan.host, pid, time, DumpFileExtension(plan.format), attempt));
}

// The report of a raw profile that is streamed into an unnamed scratch file.
Result<DumpSummary> FillWithReport(const PeriodicDumpPlan& plan, const Target& target,
                                   ProfileClient& client, AtomicFileWriter& file,
                                   const std::stop_token& stop) {
  auto scratch = OpenScratchFile();
  if (!scratch) return Fail(scratch.error());
  const std::string scratch_path = "/proc/self/fd/" + std::to_string(scratch->get());
  std::ofstream raw(scratch_path, std::ios::binary);
  auto write_raw = [&raw](std::string_view data) -> Result<void> {
    raw.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!raw) return Fail(ErrorCode::kInternal, "cannot write the scratch file of the profile");
    return {};
  };
  auto summary = StreamDump(target, client, write_raw, stop);
  if (!summary) return summary;
  raw.close();
  report::ReportRequest request;
  request.dump_path = scratch_path;
  request.format = report::ParseFormat(plan.format).value_or(report::Format::kText);
  request.pid = target.local_pid();
  std::ostringstream report;
  if (auto r = report::RunReportPipeline(request, report); !r) return Fail(r.error());
  if (auto r = file.Write(report.view()); !r) return Fail(r.error());
  return summary;
}

// Links the written file in under the first free name.
Result<std::string> CommitUnderFreeName(AtomicFileWriter& file, const PeriodicDumpPlan& plan,
                                        pid_t pid, std::chrono::system_clock::time_point time) {
  for (int attempt = 0; attempt < kMaxNameAttempts; ++attempt) {
    const std::string path = FileNameFor(plan, pid, time, attempt);
    auto committed = file.CommitNew(path);
    if (!committed) return Fail(committed.error());
    if (*committed) return path;
  }
  return Fail(ErrorCode::kInternal, "no free file name in " + plan.out_dir + " after " +
                                        std::to_string(kMaxNameAttempts) + " attempts (" +
                                        FileNameFor(plan, pid, time, 0) + " and its variants)");
}

Result<WrittenDump> DumpOnce(const PeriodicDumpPlan& plan, const Target& target,
                             ProfileClient& client, const std::stop_token& stop,
                             std::chrono::system_clock::time_point time) {
  auto file = AtomicFileWriter::Create(FileNameFor(plan, target.pid, time, 0));
  if (!file) return Fail(file.error());
  Result<DumpSummary> summary =
      plan.format == kRawDumpFormat
          ? StreamDump(
                target, client, [&file](std::string_view data) { return file->Write(data); },
                stop)
          : FillWithReport(plan, target, client, *file, stop);
  if (!summary) return Fail(summary.error());
  auto path = CommitUnderFreeName(*file, plan, target.pid, time);
  if (!path) return Fail(path.error());
  return WrittenDump{*path, *summary};
}

std::string Progress(const PeriodicDumpPlan& plan, uint64_t sequence) {
  return "[" + std::to_string(sequence) +
         (plan.count == 0 ? std::string() : "/" + std::to_string(plan.count)) + "]";
}

void ReportDump(const PeriodicDumpPlan& plan, const Target& target, const WrittenDump& dump,
                uint64_t sequence, const Console& console) {
  if (plan.json) {
    nlohmann::json line = DumpSummaryToJson(dump.summary, target.pid, dump.path);
    line["sequence"] = sequence;
    line["format"] = plan.format;
    console.out << line.dump() << '\n' << std::flush;
    return;
  }
  std::ostream& notes = console.notes();
  notes << "pid " << target.pid << ": wrote ";
  if (plan.format == kRawDumpFormat) {
    notes << FormatBytes(dump.summary.size_bytes) << " heap profile";
  } else {
    notes << "the " << plan.format << " report of a " << FormatBytes(dump.summary.size_bytes)
          << " heap profile";
  }
  notes << " to " << dump.path << " (sha256 " << dump.summary.sha256_hex << ") "
        << Progress(plan, sequence) << '\n';
}

std::string Kept(uint64_t written, const std::string& dir) {
  if (written == 0) return "no dump was written";
  return "stopped after " + std::to_string(written) + (written == 1 ? " dump" : " dumps") +
         ", kept in " + dir;
}

}  // namespace

std::string DumpFileExtension(const std::string& format) {
  if (format == kRawDumpFormat) return kRawDumpFormat;
  auto parsed = report::ParseFormat(format);
  return parsed ? std::string(report::FormatExtension(*parsed)) : format;
}

std::string UnusedDumpPath(const std::string& dir, const std::string& host, pid_t pid,
                           std::chrono::system_clock::time_point time, const std::string& format) {
  return UnusedPath(dir, [&](int attempt) {
    return DumpFileName(host, pid, time, DumpFileExtension(format), attempt);
  });
}

std::string UnusedPath(const std::string& dir, const std::function<std::string(int)>& name) {
  std::string path;
  for (int attempt = 0; attempt < kMaxNameAttempts; ++attempt) {
    path = JoinPath(dir, name(attempt));
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) break;
  }
  return path;
}

Result<void> CheckOutputDirectory(const std::string& dir, const std::string& flag) {
  struct stat st {};
  if (dir.empty() || ::stat(dir.c_str(), &st) != 0) {
    if (dir.empty() || errno == ENOENT) {
      return Fail(ErrorCode::kInvalidArgument,
                  flag + " '" + dir + "' does not exist; create it first (mkdir -p)");
    }
    return Fail(ErrorCode::kInternal,
                "cannot use " + flag + " '" + dir + "': " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                flag + " '" + dir + "' is not a directory; name a directory to write into");
  }
  // The probe is an unnamed file: it never shows up in DIR.
  auto probe = AtomicFileWriter::Create(JoinPath(dir, ".memprof-write-probe"));
  if (!probe) {
    const ErrorCode code = probe.error().code == ErrorCode::kPermissionDenied
                               ? ErrorCode::kPermissionDenied
                               : ErrorCode::kInternal;
    return Fail(code, "cannot write into " + flag + " '" + dir + "' (" + probe.error().message + ")");
  }
  return {};
}

Result<void> RunPeriodicDump(const PeriodicDumpPlan& plan, const Target& target,
                             const TargetDiscovery& discovery, ProfileClient& client,
                             const Console& console, const std::stop_token& stop,
                             const PeriodicDumpClocks& clocks) {
  IntervalTicker ticker(plan.every, clocks.ticks);
  uint64_t written = 0;
  uint64_t attempts = 0;
  while (plan.count == 0 || attempts < plan.count) {
    if (!ticker.WaitNext(stop)) break;
    ++attempts;
    auto dump = DumpOnce(plan, target, client, stop, clocks.wall());
    if (dump) {
      ReportDump(plan, target, *dump, ++written, console);
      continue;
    }
    if (stop.stop_requested()) break;  // interrupted mid-dump: that one is discarded
    if (dump.error().code == ErrorCode::kResourceExhausted) {  // busy: try at the next tick
      Log().warn("pid {}: dump {} skipped: {}", target.pid, attempts, dump.error().message);
      continue;
    }
    return Fail(
        ExplainEndOfRun(dump.error(), target, discovery, Kept(written, plan.out_dir)));
  }
  if (stop.stop_requested() && !plan.json) {
    console.notes() << "pid " << target.pid << ": interrupted; " << Kept(written, plan.out_dir)
                    << '\n';
  }
  return {};
}

}  // namespace memprof::cli
