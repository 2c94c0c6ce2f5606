#ifndef MEMPROF_CLI_COLLECT_PROFILE_OUTCOME_H_
#define MEMPROF_CLI_COLLECT_PROFILE_OUTCOME_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/client/dump_receiver.h"
#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// The pure decisions and wording of `memprofctl profile` (profile_command.cc
// does the talking): how to open the window, how to put the activation state
// back, and how to describe what happened.

// How much longer than --duration the agent-side window stays open, so that
// the CLI, not the agent's timer, ends a profile that goes to plan; the
// agent's timer only matters when memprofctl died.
inline constexpr std::chrono::milliseconds kProfileWindowMargin = std::chrono::seconds(5);

// The window to activate before profiling for `duration`, given the state
// found at `now_unix_ms`: nullopt when profiling is already active for at
// least as long as needed (open-ended, or a window ending after duration +
// margin), which is then left alone. Otherwise duration + margin, at most 24h.
std::optional<std::chrono::milliseconds> WindowToOpen(const memprof::v1::ProfilingState& previous,
                                                      std::chrono::milliseconds duration,
                                                      int64_t now_unix_ms);

// How to put the activation state back once the profile is taken.
struct RestoreStep {
  enum class Kind {
    kNothing,     // profile did not change the state
    kDeactivate,  // it was inactive, or its window has ended meanwhile
    kActivate,    // it was active: reactivate with `window` (0: open-ended)
  };
  Kind kind = Kind::kNothing;
  std::chrono::milliseconds window{0};
};

// `activated`: whether profile opened a window (WindowToOpen). A previous
// window with less than 1s left at `now_unix_ms` (the shortest window the
// agent takes) is treated as ended.
RestoreStep PlanRestore(const memprof::v1::ProfilingState& previous, bool activated,
                        int64_t now_unix_ms);

// Everything `profile` did, for the summary and --json.
struct ProfileOutcome {
  pid_t pid = 0;
  std::string path;             // --out ("-" for stdout)
  std::string format = "heap";  // --format
  DumpSummary dump;             // the heap profile (a report's source for --format F)
  std::chrono::milliseconds requested{0};
  std::chrono::milliseconds profiled{0};  // from activation (or the start of the wait) to its end
  bool ended_early = false;               // SIGINT/SIGTERM ended the window
  memprof::v1::ProfilingState previous;   // as found
  memprof::v1::ProfilingState restored;   // as left
  RestoreStep::Kind restore = RestoreStep::Kind::kNothing;
  std::string restore_error;  // "" when the state was put back (or nothing was to be done)
  // The activation generation after profile's own Activate (0: it did not
  // activate, or the agent does not count generations), and as left behind.
  uint64_t generation_opened = 0;
  uint64_t generation_left = 0;
  // Someone else changed the activation during the window, so profile left
  // their state (`restored`) alone instead of putting back `previous`.
  bool restore_skipped = false;
};

// Whether an activation found at the end of the window (`found`, with its
// generation) is profile's own window that the agent ended by itself, at
// `now_unix_ms`: the generation moved by exactly that one change, profiling
// is off, and the window profile opened (`opened`) has ended. Anything else
// that moved the generation was someone else.
bool WindowEndedByItself(const memprof::v1::ProfilingState& opened, uint64_t generation_opened,
                         const memprof::v1::ProfilingState& found, uint64_t generation_found,
                         int64_t now_unix_ms);

// "profiling state of pid 42 was changed by someone else during the window
// (generation 7 -> 9); leaving it as they set it (inactive)": the line
// `profile` prints when it left someone else's state alone.
std::string DescribeSkippedRestore(const ProfileOutcome& outcome,
                                   std::chrono::system_clock::time_point now);

// Two lines for stderr: what was profiled and written, and the state left
// behind ("pid 42: profiling switched off again, as it was before").
std::string DescribeProfile(const ProfileOutcome& outcome,
                            std::chrono::system_clock::time_point now);

// {"pid", "path", "format", "size_bytes", "sha256", "sample_interval_bytes",
//  "created_unix_ms", "requested_seconds", "profiled_seconds", "ended_early",
//  "previous": {...}, "restored": {...}, "restore_error", "restore_skipped",
//  "restore_skipped_reason", "generation_opened", "generation_left"}
nlohmann::json ProfileOutcomeToJson(const ProfileOutcome& outcome);

// One line of the progress bar, without "\r": "[######------]  12s / 30s  Ctrl-C: stop early
// and dump". `width` is the number of cells of the bar itself.
std::string ProgressLine(std::chrono::milliseconds waited, std::chrono::milliseconds total,
                         size_t width);

// "1.5s", "30s", "2m5s": a duration to the tenth of a second below a minute.
std::string FormatElapsed(std::chrono::milliseconds d);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_COLLECT_PROFILE_OUTCOME_H_
