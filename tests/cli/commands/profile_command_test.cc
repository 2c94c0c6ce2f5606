#include "cli/commands/profile_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/io/human_format.h"
#include "cli/io/logging.h"
#include "common/sha256.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::MakeDumpStream;
using testing::ReadFile;

constexpr char kData[] =
    "heap_v2/524288\n  t*: 1: 4096 [0: 0]\n@ 0x1 0x2\n  t*: 1: 4096 [0: 0]\n\nMAPPED_LIBRARIES:\n";

int64_t NowMs() { return ToUnixMillis(std::chrono::system_clock::now()); }

memprof::v1::StatusResponse WindowStatus(bool active, int64_t window_end = 0) {
  memprof::v1::StatusResponse s;
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
  s.set_profiling_supported(true);
  s.set_profiling_enabled(true);
  s.set_profiling_active(active);
  s.set_window_end_unix_ms(window_end);
  return s;
}

memprof::v1::ActivateResponse Activated(bool was_active, int64_t end) {
  memprof::v1::ActivateResponse r;
  r.mutable_previous()->set_active(was_active);
  r.mutable_current()->set_active(true);
  r.mutable_current()->set_window_end_unix_ms(end);
  return r;
}

// RunProfile with a fake agent, a separate fake for the restore (as RunCli
// wires it) and a scripted wait that ends the window at once.
class ProfileCommandTest : public testing::CommandTest {
 protected:
  testing::TempDir out_dir_;
  std::string out_path_ = out_dir_.File("p.heap");
  Console console_{out_, err_};
  testing::FakeProfileClient restore_;
  WindowWaitResult wait_result_{WindowEnd::kElapsed, milliseconds(30'000)};
  milliseconds waited_for_{0};
  ProfileRuntime runtime_;

  void SetUp() override {
    CommandTest::SetUp();
    client_.status_result = WindowStatus(false);
    client_.activate_result = Activated(false, NowMs() + 35'000);
    client_.dump_chunks = MakeDumpStream(kData, 16);
    runtime_.restore_client = &restore_;
    runtime_.wait = [this](pid_t, milliseconds duration, const std::stop_token&, milliseconds,
                           const WindowTick& tick) {
      waited_for_ = duration;
      if (tick) tick(duration / 2);
      return wait_result_;
    };
  }

  ProfileOptions Options(bool json = false) {
    ProfileOptions o;
    o.target.pid = kPid;
    o.target.json = json;
    o.duration = "30s";
    o.out = out_path_;
    return o;
  }
  Result<void> Run(const ProfileOptions& options) {
    return RunProfile(options, discovery_, client_, console_, runtime_);
  }
};

TEST_F(ProfileCommandTest, InactiveProcessIsActivatedDumpedAndSwitchedOffAgain) {
  ASSERT_TRUE(Run(Options()));
  EXPECT_EQ(client_.rpcs, (std::vector<std::string>{"Status", "Activate", "Dump"}));
  EXPECT_EQ(client_.last_activate.duration_ms(), 35'000u) << "the duration plus the margin";
  EXPECT_EQ(waited_for_, seconds(30));
  EXPECT_EQ(restore_.rpcs, std::vector<std::string>{"Deactivate"}) << "through the restore client";
  EXPECT_EQ(ReadFile(out_path_), kData);
  EXPECT_EQ(out_dir_.List(), std::vector<std::string>{"p.heap"});
  EXPECT_TRUE(out_.str().empty());
  EXPECT_NE(err_.str().find("pid 42: profiled for 30.0s; wrote "), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("pid 42: profiling switched off again, as it was before"),
            std::string::npos)
      << err_.str();
}

TEST_F(ProfileCommandTest, JsonDescribesTheOutcome) {
  memprof::v1::DeactivateResponse off;
  off.mutable_previous()->set_active(true);
  restore_.deactivate_result = off;
  ASSERT_TRUE(Run(Options(/*json=*/true)));
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["pid"], kPid);
  EXPECT_EQ(j["path"], out_path_);
  EXPECT_EQ(j["size_bytes"], std::string(kData).size());
  Sha256 sha;
  sha.Update(kData);
  EXPECT_EQ(j["sha256"], sha.FinalHex());
  EXPECT_EQ(j["profiled_seconds"], 30.0);
  EXPECT_EQ(j["ended_early"], false);
  EXPECT_EQ(j["previous"]["active"], false);
  EXPECT_EQ(j["restored"]["active"], false);
  EXPECT_EQ(j["restore_error"], "");
  EXPECT_TRUE(err_.str().empty()) << err_.str();
}

TEST_F(ProfileCommandTest, TheRestoreIsConditionalOnProfilesOwnGeneration) {
  memprof::v1::ActivateResponse opened = Activated(false, NowMs() + 35'000);
  opened.set_activation_generation(7);
  client_.activate_result = opened;
  memprof::v1::DeactivateResponse off;
  off.set_activation_generation(8);
  restore_.deactivate_result = off;
  ASSERT_TRUE(Run(Options(true)));
  EXPECT_EQ(restore_.rpcs, std::vector<std::string>{"Deactivate"});
  EXPECT_EQ(restore_.last_deactivate.if_generation(), 7u);
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["restore_skipped"], false);
  EXPECT_EQ(j["generation_opened"], 7);
  EXPECT_EQ(j["generation_left"], 8);
  EXPECT_TRUE(err_.str().empty()) << err_.str();
}

TEST_F(ProfileCommandTest, AnOldAgentIsRestoredUnconditionally) {
  ASSERT_TRUE(Run(Options()));  // generation 0 everywhere: an agent that does not count
  EXPECT_EQ(restore_.rpcs, std::vector<std::string>{"Deactivate"});
  EXPECT_EQ(restore_.last_deactivate.if_generation(), 0u);
}

// The agent refuses the conditional restore; Status shows whose state it is.
class ProfileRestoreRefusedTest : public ProfileCommandTest {
 protected:
  void SetUp() override {
    ProfileCommandTest::SetUp();
    memprof::v1::ActivateResponse opened = Activated(false, NowMs() + 35'000);
    opened.set_activation_generation(7);
    client_.activate_result = opened;
    restore_.deactivate_result = Fail(ErrorCode::kFailedPrecondition, "generation moved");
    restore_.activate_result = Fail(ErrorCode::kFailedPrecondition, "generation moved");
  }
  void FoundAtRestore(bool active, int64_t window_end, uint64_t generation) {
    memprof::v1::StatusResponse found = WindowStatus(active, window_end);
    found.set_activation_generation(generation);
    restore_.status_result = found;
  }
};

TEST_F(ProfileRestoreRefusedTest, SomeoneElsesDeactivationIsLeftAndReported) {
  FoundAtRestore(false, 0, 9);
  ASSERT_TRUE(Run(Options())) << "the profile itself succeeded";
  EXPECT_EQ(restore_.rpcs, (std::vector<std::string>{"Deactivate", "Status"}));
  EXPECT_EQ(ReadFile(out_path_), kData);
  EXPECT_NE(err_.str().find("\nprofiling state of pid 42 was changed by someone else during the "
                            "window (generation 7 -> 9); leaving it as they set it (inactive)\n"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(err_.str().find("switched off"), std::string::npos) << err_.str();
}

TEST_F(ProfileRestoreRefusedTest, SomeoneElsesWindowIsLeftAndTheJsonSaysSo) {
  const int64_t theirs = NowMs() + 3'600'000;
  FoundAtRestore(true, theirs, 8);
  ConfigureLogging(err_, 0);
  const bool ok = Run(Options(true)).has_value();
  ConfigureLogging(std::cerr, 0);
  ASSERT_TRUE(ok);
  EXPECT_EQ(restore_.rpcs, (std::vector<std::string>{"Deactivate", "Status"}));
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["restore_skipped"], true);
  EXPECT_EQ(j["restore_skipped_reason"],
            "changed by someone else during the window (generation 7 -> 8)");
  EXPECT_EQ(j["restore_error"], "");
  EXPECT_EQ(j["restored"]["active"], true);
  EXPECT_EQ(j["restored"]["window_end_unix_ms"], theirs);
  EXPECT_EQ(j["generation_left"], 8);
  EXPECT_NE(err_.str().find("memprofctl: warning: profiling state of pid 42 was changed by "
                            "someone else during the window (generation 7 -> 8)"),
            std::string::npos)
      << err_.str();
}

TEST_F(ProfileRestoreRefusedTest, ProfilesOwnWindowEndingByItselfIsNotSomeoneElse) {
  client_.activate_result->mutable_current()->set_window_end_unix_ms(NowMs() - 1);
  FoundAtRestore(false, 0, 8);
  ASSERT_TRUE(Run(Options(true)));
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["restore_skipped"], false);
  EXPECT_EQ(j["restore_error"], "");
  EXPECT_EQ(j["restored"]["active"], false);
  EXPECT_TRUE(err_.str().empty()) << err_.str();
}

TEST_F(ProfileRestoreRefusedTest, ARefusalWithTheGenerationUnmovedIsAnError) {
  FoundAtRestore(true, NowMs() + 35'000, 7);
  ASSERT_TRUE(Run(Options(true)));
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["restore_skipped"], false);
  EXPECT_EQ(j["restore_error"], "generation moved");
}

TEST_F(ProfileCommandTest, OpenEndedActivationIsLeftAlone) {
  client_.status_result = WindowStatus(true, 0);
  ASSERT_TRUE(Run(Options(true)));
  EXPECT_EQ(client_.rpcs, (std::vector<std::string>{"Status", "Dump"}));
  EXPECT_TRUE(restore_.rpcs.empty());
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["restored"]["active"], true);
  EXPECT_EQ(j["restored"]["window_end_unix_ms"], 0);
}

TEST_F(ProfileCommandTest, AWindowEndingTooSoonIsExtendedAndPutBack) {
  const int64_t old_end = NowMs() + 10'000;
  client_.status_result = WindowStatus(true, old_end);
  client_.activate_result = Activated(true, NowMs() + 35'000);
  memprof::v1::ActivateResponse back = Activated(true, old_end);
  restore_.activate_result = back;
  ASSERT_TRUE(Run(Options(true)));
  EXPECT_EQ(client_.last_activate.duration_ms(), 35'000u);
  ASSERT_EQ(restore_.rpcs, std::vector<std::string>{"Activate"});
  // The old window's end again (give or take the test's own run time).
  EXPECT_LE(restore_.last_activate.duration_ms(), 10'000u);
  EXPECT_GT(restore_.last_activate.duration_ms(), 5'000u);
  EXPECT_EQ(nlohmann::json::parse(out_.str())["restored"]["window_end_unix_ms"], old_end);
}

TEST_F(ProfileCommandTest, AnInterruptEndsTheWindowEarlyAndStillDumps) {
  wait_result_ = {WindowEnd::kEndedEarly, milliseconds(2'500)};
  ASSERT_TRUE(Run(Options(true)));
  EXPECT_EQ(client_.rpcs.back(), "Dump");
  EXPECT_EQ(ReadFile(out_path_), kData);
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["ended_early"], true);
  EXPECT_EQ(j["profiled_seconds"], 2.5);
  EXPECT_EQ(restore_.rpcs, std::vector<std::string>{"Deactivate"});
  EXPECT_NE(err_.str().find("pid 42: interrupted: profiling window ended after 2.5s of 30s; "
                            "dumping now (interrupt again to abort)"),
            std::string::npos)
      << err_.str();
}

TEST_F(ProfileCommandTest, TargetExitingDuringTheWindowWritesNothing) {
  wait_result_ = {WindowEnd::kTargetExited, milliseconds(1'200)};
  auto result = Run(Options());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(result.error().message,
            "pid 42 (demo) exited during the profiling window, after 1.2s of 30s; no profile "
            "was written");
  EXPECT_EQ(client_.rpcs, (std::vector<std::string>{"Status", "Activate"}));
  EXPECT_TRUE(restore_.rpcs.empty());
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(ProfileCommandTest, AFailedDumpStillRestoresAndLeavesNoFile) {
  auto chunks = MakeDumpStream(kData, 16);
  chunks.back().mutable_trailer()->set_sha256_hex("0000");
  client_.dump_chunks = chunks;
  auto result = Run(Options());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kDataLoss);
  EXPECT_NE(result.error().message.find(out_path_ + " was not written"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(restore_.rpcs, std::vector<std::string>{"Deactivate"});
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(ProfileCommandTest, ASecondInterruptAbortsWritesNothingAndStillRestores) {
  std::stop_source abort;
  runtime_.abort = abort.get_token();
  wait_result_ = {WindowEnd::kEndedEarly, milliseconds(100)};
  client_.before_chunk = [&abort](size_t index) -> Result<void> {
    if (index < 2) return {};
    abort.request_stop();  // what the real client does: the stream is cancelled
    return Fail(ErrorCode::kCancelled, "interrupted");
  };
  auto result = Run(Options());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(result.error().message,
            "profile aborted by a second interrupt; " + out_path_ + " was not written");
  EXPECT_EQ(restore_.rpcs, std::vector<std::string>{"Deactivate"});
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(ProfileCommandTest, AFailedRestoreIsReportedButTheProfileIsKept) {
  restore_.deactivate_result = Fail(ErrorCode::kUnavailable, "agent gone");
  ConfigureLogging(err_, 0);
  const bool ok = Run(Options(true)).has_value();
  ConfigureLogging(std::cerr, 0);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ReadFile(out_path_), kData);
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["restore_error"], "agent gone");
  EXPECT_EQ(j["restored"]["active"], true) << "as profile left it: its own window";
  EXPECT_EQ(err_.str(),
            "memprofctl: warning: pid 42: could not put the profiling state back: agent gone\n");

  out_.str("");
  err_.str("");
  ProfileOptions again = Options(false);
  again.force = true;  // the same file: replacing it is asked for
  ASSERT_TRUE(Run(again));
  EXPECT_NE(err_.str().find("pid 42: could not put the profiling state back (agent gone); it "
                            "stays active until "),
            std::string::npos)
      << err_.str();
}

TEST_F(ProfileCommandTest, ActivationRefusedByTheAgentPassesThrough) {
  client_.activate_result = Fail(ErrorCode::kFailedPrecondition, "heap profiling was not enabled");
  auto result = Run(Options());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(client_.rpcs, (std::vector<std::string>{"Status", "Activate"}));
  EXPECT_TRUE(restore_.rpcs.empty()) << "nothing was changed, so nothing is restored";
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(ProfileCommandTest, BadOptionsFailBeforeContactingAnything) {
  struct Case {
    std::function<void(ProfileOptions&)> change;
    ErrorCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](ProfileOptions& o) { o.duration = "30"; }, ErrorCode::kInvalidArgument,
       "--duration: invalid duration '30': missing unit"},
      {[](ProfileOptions& o) { o.duration = "25h"; }, ErrorCode::kInvalidArgument,
       "must be between 1s and 24h"},
      {[](ProfileOptions& o) { o.format = "pdf"; }, ErrorCode::kInvalidArgument,
       "unknown profile format 'pdf' (valid: heap, text, collapsed, pprof, svg, json)"},
      {[](ProfileOptions& o) { o.out = "-", o.target.json = true; }, ErrorCode::kInvalidArgument,
       "--json cannot be combined with --out -"},
      {[this](ProfileOptions& o) { o.out = out_dir_.File("missing/p.heap"); },
       ErrorCode::kInvalidArgument, "missing' does not exist; create it first (mkdir -p)"},
  };
  for (const Case& c : cases) {
    ProfileOptions options = Options();
    c.change(options);
    auto result = Run(options);
    ASSERT_FALSE(result) << c.message;
    EXPECT_EQ(result.error().code, c.code) << c.message;
    EXPECT_NE(result.error().message.find(c.message), std::string::npos) << result.error().message;
  }
  EXPECT_EQ(client_.calls, 0);
  EXPECT_TRUE(out_dir_.List().empty());
}

TEST_F(ProfileCommandTest, ProgressBarOnlyWhenAskedAndClearedAfterwards) {
  ASSERT_TRUE(Run(Options()));
  EXPECT_EQ(err_.str().find('\r'), std::string::npos) << "no progress bar off a terminal";
  err_.str("");
  runtime_.progress = true;
  ProfileOptions again = Options();
  again.force = true;  // the same file: replacing it is asked for
  ASSERT_TRUE(Run(again));
  EXPECT_EQ(err_.str().rfind("\r[------------------------------] 0s / 30s", 0), 0u) << err_.str();
  EXPECT_NE(err_.str().find("\r[###############---------------] 15s / 30s"), std::string::npos)
      << err_.str();
  EXPECT_NE(err_.str().find("\r\033[K"), std::string::npos) << "the bar's line is cleared";
}

TEST_F(ProfileCommandTest, ReportFormatWritesTheReport) {
  ProfileOptions options = Options(true);
  options.format = "collapsed";
  ASSERT_TRUE(Run(options));
  EXPECT_EQ(out_dir_.List(), std::vector<std::string>{"p.heap"});
  EXPECT_NE(ReadFile(out_path_), kData) << "the report, not the raw profile";
  EXPECT_EQ(nlohmann::json::parse(out_.str())["format"], "collapsed");
}

}  // namespace
}  // namespace memprof::cli
