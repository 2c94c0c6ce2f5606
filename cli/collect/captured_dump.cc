#include "cli/collect/captured_dump.h"

#include <chrono>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/client/capture_format.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/periodic_dump.h"
#include "cli/io/dump_file_name.h"
#include "cli/io/human_format.h"
#include "cli/targets/target_selection.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

struct WrittenCapture {
  memprof::v1::CaptureInfo info;
  std::string path;
  DumpSummary summary;
};

// kFailedPrecondition unless the agent holds captures, saying what to do.
Result<void> CheckHeld(const memprof::v1::StatusResponse& status, const Target& target) {
  const std::string who = "pid " + std::to_string(target.pid);
  if (!status.has_capture()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "the memprof agent of " + who + " is too old for peak capture (upgrade the agent)");
  }
  const auto& capture = status.capture();
  if (capture.held_size() > 0) return {};
  if (capture.armed()) {
    return Fail(ErrorCode::kFailedPrecondition,
                who + " holds no peak captures yet: it takes one when allocated bytes pass " +
                    FormatBytes(capture.high_water_bytes() + capture.growth_bytes()) +
                    " (high-water mark " + FormatBytes(capture.high_water_bytes()) + " + " +
                    FormatBytes(capture.growth_bytes()) + ")");
  }
  return Fail(ErrorCode::kFailedPrecondition,
              who + " holds no peak captures: peak capture is not armed; arm it first with "
                    "`memprofctl activate --pid " + std::to_string(target.pid) +
                    " --capture-growth SIZE` (e.g. 100MiB)");
}

std::string PathFor(const std::string& dir, const std::string& host, const Target& target,
                    const memprof::v1::CaptureInfo& info) {
  const auto time = std::chrono::system_clock::time_point(
      std::chrono::milliseconds(info.created_unix_ms()));
  return UnusedPath(dir, [&](int attempt) {
    return CaptureFileName(host, target.pid, time, info.sequence(), info.allocated_bytes(),
                           attempt);
  });
}

void Print(const std::vector<WrittenCapture>& written, const Target& target,
           const std::string& out_dir, bool json, const Console& console) {
  if (json) {
    nlohmann::json captures = nlohmann::json::array();
    for (const auto& w : written) {
      nlohmann::json j = CaptureInfoToJson(w.info);
      j["path"] = w.path;
      j["size_bytes"] = w.summary.size_bytes;
      j["sha256"] = w.summary.sha256_hex;
      captures.push_back(j);
    }
    const nlohmann::json document = {{"schema_version", kDumpCapturedJsonVersion},
                                     {"pid", target.pid},
                                     {"out_dir", out_dir},
                                     {"captures", captures}};
    console.out << document.dump(2) << '\n';
    return;
  }
  for (const auto& w : written) {
    console.notes() << "pid " << target.pid << ": capture #" << w.info.sequence() << " (allocated "
                << FormatBytes(w.info.allocated_bytes()) << " at "
                << FormatLocalTime(w.info.created_unix_ms()) << "): wrote "
                << FormatBytes(w.summary.size_bytes) << " to " << w.path << '\n';
  }
}

}  // namespace

Result<void> RunCapturedDump(const TargetSelector& selector, const std::string& out_dir,
                             bool json, TargetDiscovery& discovery, ProfileClient& client,
                             const Console& console, const std::stop_token& stop) {
  if (auto ok = CheckOutputDirectory(out_dir); !ok) return ok;
  auto target = discovery.Resolve(selector);
  if (!target) return Fail(target.error());
  auto status = client.Status(*target);
  if (!status) return Fail(status.error());
  if (auto held = CheckHeld(*status, *target); !held) return held;
  const std::string host = HostForFileNames(*target);
  std::vector<WrittenCapture> written;
  for (const auto& info : status->capture().held()) {
    const std::string path = PathFor(out_dir, host, *target, info);
    DumpDestination destination{selector, path, kRawDumpFormat, json, info.sequence()};
    auto dumped = DeliverDump(destination, discovery, client, console, stop);
    if (!dumped && dumped.error().code == ErrorCode::kNotFound &&
        dumped.error().message.find("is not held") != std::string::npos) {
      console.notes() << "pid " << target->pid << ": capture #" << info.sequence()
                      << " was dropped for a newer one meanwhile; skipped\n";
      continue;
    }
    if (!dumped) {
      Error error = dumped.error();
      error.message += "; " + std::to_string(written.size()) + " captures written to " + out_dir;
      return Fail(error);
    }
    written.push_back(WrittenCapture{info, path, dumped->summary});
  }
  Print(written, *target, out_dir, json, console);
  return {};
}

}  // namespace memprof::cli
