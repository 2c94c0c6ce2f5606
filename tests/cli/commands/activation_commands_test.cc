#include "cli/commands/activate_command.h"
#include "cli/commands/deactivate_command.h"
#include "cli/io/human_format.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

constexpr int64_t kNowMs = 1'700'000'000'000;
const system_clock::time_point kNow{milliseconds(kNowMs)};

memprof::v1::ActivateResponse Activation(bool was_active, int64_t old_end, int64_t new_end,
                                         bool replaced) {
  memprof::v1::ActivateResponse r;
  r.mutable_previous()->set_active(was_active);
  r.mutable_previous()->set_window_end_unix_ms(old_end);
  r.mutable_current()->set_active(true);
  r.mutable_current()->set_window_end_unix_ms(new_end);
  r.set_window_replaced(replaced);
  return r;
}

class ActivationCommandsTest : public testing::CommandTest {};

TEST_F(ActivationCommandsTest, RunActivateSendsTheDurationAndReports) {
  client_.activate_result =
      Activation(false, 0, ToUnixMillis(system_clock::now()) + 300'000, false);
  ActivateOptions options;
  options.target.pid = kPid;
  options.duration = "5m";
  ASSERT_TRUE(RunActivate(options, discovery_, client_, out_));
  EXPECT_EQ(client_.last_activate.duration_ms(), 300'000u);
  EXPECT_EQ(out_.str().rfind("pid 42: profiling activated (was inactive), until ", 0), 0u)
      << out_.str();
  EXPECT_NE(out_.str().find("(in 5m)"), std::string::npos) << out_.str();
}

TEST_F(ActivationCommandsTest, NoDurationMeansUntilDeactivated) {
  client_.activate_result = Activation(false, 0, 0, false);
  ActivateOptions options;
  options.target.pid = kPid;
  ASSERT_TRUE(RunActivate(options, discovery_, client_, out_));
  EXPECT_EQ(client_.last_activate.duration_ms(), 0u);
  EXPECT_EQ(out_.str(), "pid 42: profiling activated (was inactive), until deactivated\n");
}

TEST_F(ActivationCommandsTest, BadDurationFailsBeforeContactingAnything) {
  ActivateOptions options;
  options.target.pid = kPid;
  options.duration = "5";
  auto result = RunActivate(options, discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find("missing unit"), std::string::npos);
  EXPECT_EQ(client_.calls, 0);
}

TEST_F(ActivationCommandsTest, AlreadyActiveIsReported) {
  EXPECT_EQ(DescribeActivation(Activation(true, 0, 0, false), 42, kNow),
            "pid 42: profiling already active, until deactivated");
}

TEST_F(ActivationCommandsTest, ReplacedWindowIsReported) {
  const std::string text =
      DescribeActivation(Activation(true, kNowMs + 60'000, kNowMs + 600'000, true), 42, kNow);
  EXPECT_EQ(text.rfind("pid 42: profiling already active; the previous window (until ", 0), 0u)
      << text;
  EXPECT_NE(text.find(") was replaced, now active until "), std::string::npos) << text;
  EXPECT_NE(text.find("(in 10m)"), std::string::npos) << text;
}

TEST_F(ActivationCommandsTest, ActivateJsonShape) {
  auto response = Activation(true, 5, 6, true);
  response.set_sample_interval_bytes(1024);
  response.set_previous_sample_interval_bytes(524288);
  response.set_samples_reset(true);
  response.set_activation_generation(3);
  const auto j = ActivationToJson(response, 42, 1000);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"schema_version": 1, "pid": 42,
      "previous": {"active": true, "window_end_unix_ms": 5},
      "current": {"active": true, "window_end_unix_ms": 6},
      "window_replaced": true,
      "sample_interval_bytes": 1024,
      "previous_sample_interval_bytes": 524288,
      "requested_sample_interval_bytes": 1000,
      "samples_reset": true,
      "capture": {"armed": false, "growth_bytes": 0, "keep": 0, "high_water_bytes": 0,
                  "taken_total": 0, "held": [],
                  "near_limit_percent": 0, "next_near_limit_percent": 0},
      "activation_generation": 3})"));
  // Without --sample-interval the keys are there all the same, as numbers.
  EXPECT_EQ(ActivationToJson(Activation(false, 0, 0, false), 42)["requested_sample_interval_bytes"],
            0);
}

memprof::v1::ActivateResponse Sampling(uint64_t was, uint64_t now, bool reset) {
  auto r = Activation(false, 0, 0, false);
  r.set_previous_sample_interval_bytes(was);
  r.set_sample_interval_bytes(now);
  r.set_samples_reset(reset);
  return r;
}

TEST_F(ActivationCommandsTest, SampleIntervalIsRoundedSentAndReported) {
  client_.activate_result = Sampling(524288, 1024, true);
  ActivateOptions options;
  options.target.pid = kPid;
  options.sample_interval = "1000";
  ASSERT_TRUE(RunActivate(options, discovery_, client_, out_));
  EXPECT_EQ(client_.last_activate.sample_interval_bytes(), 1024u);
  EXPECT_FALSE(client_.last_activate.reset());
  EXPECT_EQ(out_.str(),
            "pid 42: profiling activated (was inactive), until deactivated\n"
            "pid 42: --sample-interval 1000 bytes rounded to 1024 bytes (jemalloc samples at "
            "powers of two); sample interval now 1.0 KiB (1024 bytes), was 512.0 KiB; the "
            "samples collected so far were discarded (prof.reset)\n");
}

TEST_F(ActivationCommandsTest, ResetIsSentAndItsCostSpelledOut) {
  client_.activate_result = Sampling(524288, 524288, true);
  ActivateOptions options;
  options.target.pid = kPid;
  options.reset = true;
  ASSERT_TRUE(RunActivate(options, discovery_, client_, out_));
  EXPECT_TRUE(client_.last_activate.reset());
  EXPECT_EQ(client_.last_activate.sample_interval_bytes(), 0u);
  EXPECT_NE(out_.str().find("pid 42: sample interval unchanged, 512.0 KiB (524288 bytes); the "
                            "samples collected so far were discarded (prof.reset)"),
            std::string::npos)
      << out_.str();
}

TEST_F(ActivationCommandsTest, TheIntervalInForceKeepsTheSamples) {
  EXPECT_EQ(DescribeSampling(Sampling(1048576, 1048576, false), 42, 1048576, false),
            "pid 42: sample interval already 1.0 MiB (1048576 bytes); samples collected so far "
            "are kept");
  EXPECT_EQ(DescribeSampling(Sampling(1048576, 1048576, false), 42, 0, false), "")
      << "a plain activate says nothing about sampling";
}

TEST_F(ActivationCommandsTest, BadSampleIntervalFailsBeforeContactingAnything) {
  ActivateOptions options;
  options.target.pid = kPid;
  options.sample_interval = "2GiB";
  auto result = RunActivate(options, discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find("--sample-interval: invalid size '2GiB'"),
            std::string::npos)
      << result.error().message;
  EXPECT_EQ(client_.calls, 0);
}

TEST_F(ActivationCommandsTest, AnAgentTooOldForSamplingControlIsNamed) {
  client_.activate_result = Activation(false, 0, 0, false);  // no sample_interval_bytes
  ActivateOptions options;
  options.target.pid = kPid;
  options.reset = true;
  auto result = RunActivate(options, discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(result.error().message.find("too old for --sample-interval and --reset"),
            std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("no samples were discarded"), std::string::npos);
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(ActivationCommandsTest, PreconditionFailureFromTheAgentPassesThrough) {
  client_.activate_result =
      Fail(ErrorCode::kFailedPrecondition, "heap profiling was not enabled ...");
  ActivateOptions options;
  options.target.pid = kPid;
  auto result = RunActivate(options, discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(ActivationCommandsTest, RunDeactivateSaysSamplesAreKept) {
  memprof::v1::DeactivateResponse r;
  r.mutable_previous()->set_active(true);
  client_.deactivate_result = r;
  DeactivateOptions options;
  options.target.pid = kPid;
  ASSERT_TRUE(RunDeactivate(options, discovery_, client_, out_));
  EXPECT_EQ(out_.str(),
            "pid 42: profiling deactivated (was active); samples collected so far are kept\n");
}

TEST_F(ActivationCommandsTest, DeactivateWhenInactive) {
  EXPECT_EQ(DescribeDeactivation(memprof::v1::DeactivateResponse(), 42, kNow),
            "pid 42: profiling already inactive; samples collected so far are kept");
}

TEST_F(ActivationCommandsTest, DeactivateJsonShape) {
  memprof::v1::DeactivateResponse r;
  r.mutable_previous()->set_active(true);
  r.mutable_previous()->set_window_end_unix_ms(99);
  r.set_activation_generation(4);
  const auto j = DeactivationToJson(r, 42);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"schema_version": 1, "pid": 42,
      "previous": {"active": true, "window_end_unix_ms": 99},
      "current": {"active": false, "window_end_unix_ms": 0},
      "capture": {"armed": false, "growth_bytes": 0, "keep": 0, "high_water_bytes": 0,
                  "taken_total": 0, "held": [],
                  "near_limit_percent": 0, "next_near_limit_percent": 0},
      "activation_generation": 4})"));
}

}  // namespace
}  // namespace memprof::cli
