#include "cli/collect/captured_dump.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "cli/client/capture_format.h"
#include "cli/collect/dump_delivery.h"
#include "cli/collect/interval_ticker.h"
#include "cli/collect/periodic_dump.h"
#include "cli/io/dump_file_name.h"
#include "cli/io/human_format.h"
#include "cli/io/logging.h"
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
  if (capture.armed() && capture.growth_bytes() == 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                who + " holds no peak captures yet: it takes one when its memory cgroup's usage "
                      "reaches " + std::to_string(capture.next_near_limit_percent()) +
                      "% of the limit");
  }
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
                    " --capture-growth SIZE` (e.g. 100MiB) or `--capture-near-limit PERCENT` (e.g. "
                    "90%)");
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

nlohmann::json Document(const std::vector<WrittenCapture>& written, const Target& target,
                        const std::string& out_dir) {
  nlohmann::json captures = nlohmann::json::array();
  for (const auto& w : written) {
    nlohmann::json j = CaptureInfoToJson(w.info);
    j["path"] = w.path;
    j["size_bytes"] = w.summary.size_bytes;
    j["sha256"] = w.summary.sha256_hex;
    captures.push_back(j);
  }
  return {{"schema_version", kDumpCapturedJsonVersion},
          {"pid", target.pid},
          {"out_dir", out_dir},
          {"captures", captures}};
}

std::string NearLimitText(const memprof::v1::CaptureInfo& info) {
  if (info.trigger() != memprof::v1::CAPTURE_TRIGGER_NEAR_LIMIT || info.cgroup_limit_bytes() == 0) {
    return "";
  }
  return ", cgroup usage " + FormatBytes(info.cgroup_usage_bytes()) + " of " +
         FormatBytes(info.cgroup_limit_bytes()) + " (" +
         std::to_string(info.cgroup_usage_bytes() / (info.cgroup_limit_bytes() / 100 + 1)) + "%)";
}

void PrintLine(const WrittenCapture& w, const Target& target, const Console& console) {
  console.notes() << "pid " << target.pid << ": capture #" << w.info.sequence() << " (allocated "
                  << FormatBytes(w.info.allocated_bytes()) << NearLimitText(w.info) << " at "
                  << FormatLocalTime(w.info.created_unix_ms()) << "): wrote "
                  << FormatBytes(w.summary.size_bytes) << " to " << w.path << '\n';
}

// Everything written, as one document or a line each (--follow prints each
// capture as it is written: one document per line).
void Print(const std::vector<WrittenCapture>& written, const Target& target,
           const std::string& out_dir, bool json, bool one_line, const Console& console) {
  if (json) {
    console.out << Document(written, target, out_dir).dump(one_line ? -1 : 2) << std::endl;
    return;
  }
  for (const auto& w : written) PrintLine(w, target, console);
}

// Fetches capture `info` into `out_dir`. nullopt (with a note) when the agent
// dropped it for a newer one meanwhile.
Result<std::optional<WrittenCapture>> Fetch(const TargetSelector& selector, const Target& target,
                                            const std::string& out_dir, const std::string& host,
                                            const memprof::v1::CaptureInfo& info, bool json,
                                            const TargetDiscovery& discovery, ProfileClient& client,
                                            const Console& console, const std::stop_token& stop) {
  const std::string path = PathFor(out_dir, host, target, info);
  DumpDestination destination{selector, path, kRawDumpFormat, json, info.sequence()};
  auto dumped = DeliverDump(destination, discovery, client, console, stop);
  if (!dumped && dumped.error().code == ErrorCode::kNotFound &&
      dumped.error().message.find("is not held") != std::string::npos) {
    console.notes() << "pid " << target.pid << ": capture #" << info.sequence()
                    << " was dropped for a newer one meanwhile; skipped\n";
    return std::optional<WrittenCapture>();
  }
  if (!dumped) return Fail(dumped.error());
  return std::optional<WrittenCapture>(WrittenCapture{info, path, dumped->summary});
}

// Whether follow must wait: the agent holds captures or will take some.
Result<void> CheckFollowable(const memprof::v1::StatusResponse& status, const Target& target) {
  if (status.has_capture() && (status.capture().armed() || status.capture().held_size() > 0)) {
    return {};
  }
  return CheckHeld(status, target);
}

Error NothingWritten(pid_t pid, const std::string& out_dir) {
  return Error(ErrorCode::kUnavailable, "pid " + std::to_string(pid) +
                                            " took no capture before following ended; nothing "
                                            "was written to " + out_dir);
}

// Whether the process ends within a moment: a process being killed closes
// its agent's connections before /proc shows it gone.
bool EndsSoon(const TargetDiscovery& discovery, pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!discovery.ProcessGone(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// What one state of the agent's captures asks of the follower: the new
// captures written; false once following should end (the process ended
// while one was fetched, or its capturing was disarmed), with a note.
Result<bool> FollowState(const Target& target, const memprof::v1::CaptureState& capture,
                         const std::string& out_dir, bool json, CaptureProgress& progress,
                         const TargetDiscovery& discovery, ProfileClient& client,
                         const Console& console, const std::stop_token& stop) {
  auto saved =
      SaveNewCaptures(target, capture, out_dir, json, progress, discovery, client, console, stop);
  if (!saved || !*saved) return saved;
  if (capture.armed()) return true;
  console.notes() << "pid " << target.pid
                  << ": capturing was disarmed (deactivate, or a window that ended); "
                  << progress.written << " captures written to " << out_dir << '\n';
  return false;
}

// One look at the agent (Status): writes the captures newer than the last
// written. false once following should end, with a note saying why.
Result<bool> FollowOnce(const Target& target, const std::string& out_dir, bool json,
                        CaptureProgress& progress, const TargetDiscovery& discovery,
                        ProfileClient& client, const Console& console,
                        const std::stop_token& stop) {
  auto status = client.Status(target);
  if (!status) {
    if (!EndsSoon(discovery, target.pid)) return Fail(status.error());
    console.notes() << "pid " << target.pid << " ended; " << progress.written
                    << " captures written to " << out_dir << '\n';
    return false;
  }
  return FollowState(target, status->capture(), out_dir, json, progress, discovery, client, console,
                     stop);
}

// --follow: writes each capture as it is taken, until the process ends, its
// capturing is disarmed, or a stop request. The agent pushes each change
// (Watch); when the stream breaks (the agent's server stops around a fork,
// the process ends) one Status says what happened and the watch starts
// again, at most every kFollowPollInterval. An agent older than Watch is
// asked every kFollowPollInterval instead.
Result<void> Follow(const Target& target, const std::string& out_dir, bool json,
                    TargetDiscovery& discovery, ProfileClient& client, const Console& console,
                    const std::stop_token& stop) {
  // Said once the agent's first answer is in: from then on, no capture is missed.
  bool announced = false;
  const auto announce = [&] {
    if (std::exchange(announced, true)) return;
    console.notes() << "pid " << target.pid << ": following its captures into " << out_dir
                    << ", each written as it is taken (until it ends, capturing is disarmed, "
                       "or Ctrl-C)\n";
  };
  CaptureProgress progress;
  const WatchSink on_change = [&](const memprof::v1::WatchEvent& event) {
    announce();
    return FollowState(target, event.capture(), out_dir, json, progress, discovery, client, console,
                       stop);
  };
  bool pushed = true;
  IntervalTicker ticker(kFollowPollInterval, SteadyTickClock());
  while (ticker.WaitNext(stop)) {
    if (pushed) {
      auto watched = client.Watch(target, on_change, stop);
      if (watched && *watched) break;  // FollowState ended it, with its note
      if (watched) pushed = false;     // an agent older than Watch
      if (stop.stop_requested()) break;
      if (!watched) Log().debug("pid {}: watch ended: {}", target.pid, watched.error().message);
    }
    announce();
    auto more = FollowOnce(target, out_dir, json, progress, discovery, client, console, stop);
    if (!more) return Fail(more.error());
    if (!*more) break;
  }
  if (progress.written == 0 && !stop.stop_requested()) {
    return Fail(NothingWritten(target.pid, out_dir));
  }
  return {};
}

}  // namespace

Result<bool> SaveNewCaptures(const Target& target, const memprof::v1::CaptureState& capture,
                             const std::string& out_dir, bool json, CaptureProgress& progress,
                             const TargetDiscovery& discovery, ProfileClient& client,
                             const Console& console, const std::stop_token& stop) {
  const std::string host = HostForFileNames(target);
  const TargetSelector selector{.pid = target.pid, .name = "", .resolved = target};
  for (const auto& info : capture.held()) {
    if (info.sequence() <= progress.last_sequence) continue;
    auto fetched = Fetch(selector, target, out_dir, host, info, json, discovery, client, console,
                         stop);
    if (!fetched && EndsSoon(discovery, target.pid)) {
      console.notes() << "pid " << target.pid << " ended while capture #" << info.sequence()
                      << " was fetched (nothing of it was written); " << progress.written
                      << " captures written to " << out_dir << '\n';
      return false;
    }
    if (!fetched) return Fail(fetched.error());
    progress.last_sequence = info.sequence();
    if (!fetched->has_value()) continue;
    ++progress.written;
    Print({**fetched}, target, out_dir, json, /*one_line=*/true, console);
  }
  return true;
}

Result<void> RunCapturedDump(const TargetSelector& selector, const std::string& out_dir,
                             bool json, bool follow, TargetDiscovery& discovery,
                             ProfileClient& client, const Console& console,
                             const std::stop_token& stop) {
  if (auto ok = CheckOutputDirectory(out_dir); !ok) return ok;
  auto target = discovery.Resolve(selector);
  if (!target) return Fail(target.error());
  auto status = client.Status(*target);
  if (!status && follow && EndsSoon(discovery, target->pid)) {
    console.notes() << "pid " << target->pid << " ended; 0 captures written to " << out_dir << '\n';
    return Fail(NothingWritten(target->pid, out_dir));
  }
  if (!status) return Fail(status.error());
  if (follow) {
    if (auto ok = CheckFollowable(*status, *target); !ok) return ok;
    return Follow(*target, out_dir, json, discovery, client, console, stop);
  }
  if (auto held = CheckHeld(*status, *target); !held) return held;
  const std::string host = HostForFileNames(*target);
  std::vector<WrittenCapture> written;
  for (const auto& info : status->capture().held()) {
    auto fetched =
        Fetch(selector, *target, out_dir, host, info, json, discovery, client, console, stop);
    if (!fetched) {
      Error error = fetched.error();
      error.message += "; " + std::to_string(written.size()) + " captures written to " + out_dir;
      return Fail(error);
    }
    if (fetched->has_value()) written.push_back(**fetched);
  }
  Print(written, *target, out_dir, json, /*one_line=*/false, console);
  return {};
}

}  // namespace memprof::cli
