#include "cli/collect/profile_outcome.h"

#include <algorithm>
#include <cstdio>

#include "cli/client/profiling_format.h"
#include "cli/io/human_format.h"
#include "common/duration.h"
#include "common/json_schema_versions.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using Kind = RestoreStep::Kind;

double Seconds(milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

std::string Where(const std::string& path) { return path == "-" ? std::string("stdout") : path; }

std::string WhatWasWritten(const ProfileOutcome& o) {
  const std::string size = FormatBytes(o.dump.size_bytes);
  if (o.format == "heap") {
    return "wrote " + size + " heap profile to " + Where(o.path) + " (sha256 " + o.dump.sha256_hex +
           ")";
  }
  return "wrote the " + o.format + " report of a " + size + " heap profile to " + Where(o.path);
}

std::string StateLeftBehind(const ProfileOutcome& o, std::chrono::system_clock::time_point now) {
  if (o.restore_skipped) return DescribeSkippedRestore(o, now);
  const std::string until = DescribeWindowEnd(o.restored.window_end_unix_ms(), now);
  if (!o.restore_error.empty()) {
    return "could not put the profiling state back (" + o.restore_error + "); it stays active " +
           until + (o.restored.window_end_unix_ms() != 0 ? ", when the agent ends it" : "");
  }
  switch (o.restore) {
    case Kind::kNothing:
      return "profiling left active " + until + ", as it was before";
    case Kind::kActivate:
      return "profiling active " + until + " again, as it was before";
    case Kind::kDeactivate:
      if (!o.previous.active()) return "profiling switched off again, as it was before";
      return "profiling switched off: the window it had before (until " +
             FormatLocalTime(o.previous.window_end_unix_ms()) + ") has ended meanwhile";
  }
  return "";
}

}  // namespace

std::optional<milliseconds> WindowToOpen(const memprof::v1::ProfilingState& previous,
                                         milliseconds duration, int64_t now_unix_ms) {
  const milliseconds wanted = std::min(duration + kProfileWindowMargin, kMaxWindow);
  if (previous.active()) {
    const int64_t end = previous.window_end_unix_ms();
    if (end == 0 || end >= now_unix_ms + wanted.count()) return std::nullopt;
  }
  return wanted;
}

RestoreStep PlanRestore(const memprof::v1::ProfilingState& previous, bool activated,
                        int64_t now_unix_ms) {
  if (!activated) return {Kind::kNothing, milliseconds(0)};
  if (!previous.active()) return {Kind::kDeactivate, milliseconds(0)};
  if (previous.window_end_unix_ms() == 0) return {Kind::kActivate, milliseconds(0)};
  const milliseconds left(previous.window_end_unix_ms() - now_unix_ms);
  if (left < kMinWindow) return {Kind::kDeactivate, milliseconds(0)};
  return {Kind::kActivate, std::min(left, kMaxWindow)};
}

bool WindowEndedByItself(const memprof::v1::ProfilingState& opened, uint64_t generation_opened,
                         const memprof::v1::ProfilingState& found, uint64_t generation_found,
                         int64_t now_unix_ms) {
  return generation_found == generation_opened + 1 && !found.active() &&
         opened.window_end_unix_ms() != 0 && now_unix_ms >= opened.window_end_unix_ms();
}

std::string DescribeSkippedRestore(const ProfileOutcome& o,
                                   std::chrono::system_clock::time_point now) {
  const std::string state =
      o.restored.active() ? "active " + DescribeWindowEnd(o.restored.window_end_unix_ms(), now)
                          : std::string("inactive");
  return "profiling state of pid " + std::to_string(o.pid) +
         " was changed by someone else during the window (generation " +
         std::to_string(o.generation_opened) + " -> " + std::to_string(o.generation_left) +
         "); leaving it as they set it (" + state + ")";
}

std::string DescribeProfile(const ProfileOutcome& o, std::chrono::system_clock::time_point now) {
  const std::string who = "pid " + std::to_string(o.pid) + ": ";
  std::string profiled = "profiled for " + FormatElapsed(o.profiled);
  if (o.ended_early) {
    profiled += " of " + FormatDuration(o.requested) + " (ended early by an interrupt)";
  }
  // A skipped restore names the pid itself: it is also the line logged with --json.
  return who + profiled + "; " + WhatWasWritten(o) + "\n" + (o.restore_skipped ? "" : who) +
         StateLeftBehind(o, now);
}

nlohmann::json ProfileOutcomeToJson(const ProfileOutcome& o) {
  return {{"schema_version", kProfileJsonVersion},
          {"pid", o.pid},
          {"path", o.path},
          {"format", o.format},
          {"size_bytes", o.dump.size_bytes},
          {"sha256", o.dump.sha256_hex},
          {"sample_interval_bytes", o.dump.sample_interval_bytes},
          {"created_unix_ms", o.dump.created_unix_ms},
          {"requested_seconds", Seconds(o.requested)},
          {"profiled_seconds", Seconds(o.profiled)},
          {"ended_early", o.ended_early},
          {"previous", ProfilingStateToJson(o.previous)},
          {"restored", ProfilingStateToJson(o.restored)},
          {"restore_error", o.restore_error},
          {"restore_skipped", o.restore_skipped},
          {"restore_skipped_reason",
           o.restore_skipped ? "changed by someone else during the window (generation " +
                                   std::to_string(o.generation_opened) + " -> " +
                                   std::to_string(o.generation_left) + ")"
                             : std::string()},
          {"generation_opened", o.generation_opened},
          {"generation_left", o.generation_left}};
}

std::string ProgressLine(milliseconds waited, milliseconds total, size_t width) {
  const double fraction =
      total.count() <= 0 ? 1.0 : std::clamp(Seconds(waited) / Seconds(total), 0.0, 1.0);
  const auto filled = std::min(width, static_cast<size_t>(fraction * static_cast<double>(width)));
  const auto whole_seconds = std::chrono::duration_cast<std::chrono::seconds>(waited);
  return "[" + std::string(filled, '#') + std::string(width - filled, '-') + "] " +
         FormatDuration(whole_seconds) + " / " + FormatDuration(total) +
         "  Ctrl-C: stop early and dump";
}

std::string FormatElapsed(milliseconds d) {
  if (d >= std::chrono::minutes(1)) {
    return FormatDuration(std::chrono::duration_cast<std::chrono::seconds>(d));
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1fs", Seconds(d));
  return text;
}

}  // namespace memprof::cli
