#include "cli/collect/profile_outcome.h"

#include <gtest/gtest.h>

#include "cli/io/human_format.h"

namespace memprof::cli {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using Kind = RestoreStep::Kind;

constexpr int64_t kNowMs = 1'700'000'000'000;
const std::chrono::system_clock::time_point kNow{milliseconds(kNowMs)};

memprof::v1::ProfilingState State(bool active, int64_t window_end = 0) {
  memprof::v1::ProfilingState s;
  s.set_active(active);
  s.set_window_end_unix_ms(window_end);
  return s;
}

TEST(ProfileOutcomeTest, InactiveGetsTheDurationPlusTheMargin) {
  EXPECT_EQ(WindowToOpen(State(false), seconds(30), kNowMs), seconds(35));
  EXPECT_EQ(WindowToOpen(State(false), hours(24), kNowMs), hours(24))
      << "never more than the agent's 24h";
}

TEST(ProfileOutcomeTest, ActiveLongEnoughIsLeftAlone) {
  EXPECT_EQ(WindowToOpen(State(true, 0), seconds(30), kNowMs), std::nullopt) << "open-ended";
  EXPECT_EQ(WindowToOpen(State(true, kNowMs + 35'000), seconds(30), kNowMs), std::nullopt);
  EXPECT_EQ(WindowToOpen(State(true, kNowMs + 3'600'000), seconds(30), kNowMs), std::nullopt);
}

TEST(ProfileOutcomeTest, AWindowEndingTooSoonIsExtended) {
  EXPECT_EQ(WindowToOpen(State(true, kNowMs + 34'999), seconds(30), kNowMs), seconds(35));
  EXPECT_EQ(WindowToOpen(State(true, kNowMs + 1'000), seconds(30), kNowMs), seconds(35));
}

TEST(ProfileOutcomeTest, RestorePutsBackWhatWasThere) {
  auto step = PlanRestore(State(false), true, kNowMs);
  EXPECT_EQ(step.kind, Kind::kDeactivate);
  step = PlanRestore(State(true, 0), true, kNowMs);
  EXPECT_EQ(step.kind, Kind::kActivate);
  EXPECT_EQ(step.window, milliseconds(0)) << "open-ended again";
  step = PlanRestore(State(true, kNowMs + 90'000), true, kNowMs);
  EXPECT_EQ(step.kind, Kind::kActivate);
  EXPECT_EQ(step.window, seconds(90)) << "the old window's end, not a new one";
  for (const auto& untouched : {State(false), State(true, 0), State(true, kNowMs + 90'000)}) {
    EXPECT_EQ(PlanRestore(untouched, false, kNowMs).kind, Kind::kNothing);
  }
}

TEST(ProfileOutcomeTest, AWindowThatEndedMeanwhileIsSwitchedOff) {
  EXPECT_EQ(PlanRestore(State(true, kNowMs - 5'000), true, kNowMs).kind, Kind::kDeactivate);
  EXPECT_EQ(PlanRestore(State(true, kNowMs + 999), true, kNowMs).kind, Kind::kDeactivate)
      << "less than the shortest window the agent takes";
  EXPECT_EQ(PlanRestore(State(true, kNowMs + 1'000), true, kNowMs).window, seconds(1));
}

ProfileOutcome Outcome() {
  ProfileOutcome o;
  o.pid = 42;
  o.path = "out.heap";
  o.dump.size_bytes = 43008;
  o.dump.sha256_hex = "abc123";
  o.dump.sample_interval_bytes = 524288;
  o.dump.created_unix_ms = kNowMs;
  o.requested = seconds(30);
  o.profiled = milliseconds(30'004);
  o.previous = State(false);
  o.restored = State(false);
  o.restore = Kind::kDeactivate;
  return o;
}

TEST(ProfileOutcomeTest, DescribesWhatWasWrittenAndTheStateLeft) {
  EXPECT_EQ(DescribeProfile(Outcome(), kNow),
            "pid 42: profiled for 30.0s; wrote 42.0 KiB heap profile to out.heap (sha256 "
            "abc123)\npid 42: profiling switched off again, as it was before");
}

TEST(ProfileOutcomeTest, DescribesAnEarlyEndAndAReport) {
  ProfileOutcome o = Outcome();
  o.ended_early = true;
  o.profiled = milliseconds(12'340);
  o.format = "svg";
  o.path = "-";
  const std::string text = DescribeProfile(o, kNow);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "pid 42: profiled for 12.3s of 30s (ended early by an interrupt); wrote the svg "
            "report of a 42.0 KiB heap profile to stdout");
}

TEST(ProfileOutcomeTest, DescribesEachWayTheStateIsLeft) {
  ProfileOutcome o = Outcome();
  auto second_line = [&] {
    const std::string text = DescribeProfile(o, kNow);
    return text.substr(text.find('\n') + 1);
  };
  o.previous = o.restored = State(true, 0);
  o.restore = Kind::kNothing;
  EXPECT_EQ(second_line(), "pid 42: profiling left active until deactivated, as it was before");
  o.restore = Kind::kActivate;
  o.previous = o.restored = State(true, kNowMs + 300'000);
  EXPECT_EQ(second_line(), "pid 42: profiling active until " + FormatLocalTime(kNowMs + 300'000) +
                               " (in 5m) again, as it was before");
  o.restore = Kind::kDeactivate;
  o.previous = State(true, kNowMs - 1'000);
  o.restored = State(false);
  EXPECT_EQ(second_line(), "pid 42: profiling switched off: the window it had before (until " +
                               FormatLocalTime(kNowMs - 1'000) + ") has ended meanwhile");
  o.restore_error = "agent gone";
  o.restored = State(true, kNowMs + 35'000);
  EXPECT_EQ(second_line(),
            "pid 42: could not put the profiling state back (agent gone); it "
            "stays active until " +
                FormatLocalTime(kNowMs + 35'000) + " (in 35s), when the agent ends it");
}

TEST(ProfileOutcomeTest, JsonHasFixedKeysAndTypes) {
  ProfileOutcome o = Outcome();
  o.ended_early = true;
  o.profiled = milliseconds(1'500);
  const auto j = ProfileOutcomeToJson(o);
  EXPECT_EQ(j, nlohmann::json::parse(
                   R"({"schema_version": 1, "pid": 42, "path": "out.heap", "format": "heap",
      "size_bytes": 43008, "sha256": "abc123", "sample_interval_bytes": 524288,
      "created_unix_ms": 1700000000000, "requested_seconds": 30.0, "profiled_seconds": 1.5,
      "ended_early": true,
      "previous": {"active": false, "window_end_unix_ms": 0},
      "restored": {"active": false, "window_end_unix_ms": 0},
      "restore_error": "", "restore_skipped": false, "restore_skipped_reason": "",
      "generation_opened": 0, "generation_left": 0})"));
  EXPECT_TRUE(j["requested_seconds"].is_number_float());
  EXPECT_TRUE(ProfileOutcomeToJson(Outcome())["profiled_seconds"].is_number_float())
      << "a number of seconds is always a float, even a whole one";
}

TEST(ProfileOutcomeTest, ASkippedRestoreSaysWhoseStateIsLeft) {
  ProfileOutcome o = Outcome();
  o.restore = Kind::kDeactivate;
  o.restore_skipped = true;
  o.generation_opened = 7;
  o.generation_left = 9;
  o.restored = State(true, kNowMs + 600'000);
  const std::string text = DescribeProfile(o, kNow);
  EXPECT_EQ(text.substr(text.find('\n') + 1),
            "profiling state of pid 42 was changed by someone else during the window "
            "(generation 7 -> 9); leaving it as they set it (active until " +
                FormatLocalTime(kNowMs + 600'000) + " (in 10m))");
  o.restored = State(false);
  EXPECT_EQ(DescribeSkippedRestore(o, kNow),
            "profiling state of pid 42 was changed by someone else during the window "
            "(generation 7 -> 9); leaving it as they set it (inactive)");
  const auto j = ProfileOutcomeToJson(o);
  EXPECT_EQ(j["restore_skipped"], true);
  EXPECT_EQ(j["restore_skipped_reason"],
            "changed by someone else during the window (generation 7 -> 9)");
  EXPECT_EQ(j["generation_opened"], 7);
  EXPECT_EQ(j["generation_left"], 9);
  EXPECT_EQ(j["restored"]["active"], false);
}

TEST(ProfileOutcomeTest, OnlyProfilesOwnWindowEndingIsNotSomeoneElse) {
  const auto opened = State(true, kNowMs - 1);
  EXPECT_TRUE(WindowEndedByItself(opened, 7, State(false), 8, kNowMs));
  EXPECT_FALSE(WindowEndedByItself(opened, 7, State(false), 9, kNowMs)) << "two changes";
  EXPECT_FALSE(WindowEndedByItself(opened, 7, State(true, kNowMs + 60'000), 8, kNowMs))
      << "someone activated";
  EXPECT_FALSE(WindowEndedByItself(State(true, kNowMs + 1'000), 7, State(false), 8, kNowMs))
      << "profile's window has not ended yet: someone deactivated";
  EXPECT_FALSE(WindowEndedByItself(State(true, 0), 7, State(false), 8, kNowMs));
}

TEST(ProfileOutcomeTest, ProgressLineFillsWithTime) {
  EXPECT_EQ(ProgressLine(milliseconds(0), seconds(30), 10),
            "[----------] 0s / 30s  Ctrl-C: stop early and dump");
  EXPECT_EQ(ProgressLine(milliseconds(15'400), seconds(30), 10),
            "[#####-----] 15s / 30s  Ctrl-C: stop early and dump");
  EXPECT_EQ(ProgressLine(minutes(2), minutes(1), 4), "[####] 2m / 1m  Ctrl-C: stop early and dump");
}

TEST(ProfileOutcomeTest, ElapsedTimeHasTenthsBelowAMinute) {
  EXPECT_EQ(FormatElapsed(milliseconds(0)), "0.0s");
  EXPECT_EQ(FormatElapsed(milliseconds(12'345)), "12.3s");
  EXPECT_EQ(FormatElapsed(milliseconds(59'999)), "60.0s");
  EXPECT_EQ(FormatElapsed(milliseconds(125'400)), "2m5s");
}

}  // namespace
}  // namespace memprof::cli
