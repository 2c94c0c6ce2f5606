// activate / deactivate, including timed windows that end agent-side.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ActivationTest : public ShapeTest {};

void ExpectStateShape(const json& state) {
  EXPECT_TRUE(state.is_object()) << state.dump(2);
  EXPECT_TRUE(state.contains("active") && state["active"].is_boolean()) << state.dump(2);
  EXPECT_TRUE(state.contains("window_end_unix_ms") && state["window_end_unix_ms"].is_number_integer())
      << state.dump(2);
}

TEST_P(ActivationTest, ActivateReportsTransitionAndIsIdempotent) {
  CommandResult first = CliFor(target(), "activate");
  ASSERT_EQ(first.exit_code, 0) << first;
  EXPECT_NE(first.out.find("pid " + std::to_string(target().pid())), std::string::npos) << first;
  EXPECT_NE(first.out.find("activated"), std::string::npos) << first;
  EXPECT_EQ(StatusJson(target())["profiling_active"], true);

  CommandResult again = CliFor(target(), "activate");
  ASSERT_EQ(again.exit_code, 0) << again;
  EXPECT_NE(again.out.find("already active"), std::string::npos) << again;

  CommandResult as_json = CliFor(target(), "activate", {"--json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json;
  json j = ParseJsonOutput(as_json);
  EXPECT_EQ(j["pid"], target().pid());
  ExpectStateShape(j["previous"]);
  ExpectStateShape(j["current"]);
  EXPECT_EQ(j["previous"]["active"], true);
  EXPECT_EQ(j["current"]["active"], true);
  EXPECT_EQ(j["current"]["window_end_unix_ms"], 0);
  EXPECT_EQ(j["window_replaced"], false);
  EXPECT_TRUE(j["window_replaced"].is_boolean());
}

TEST_P(ActivationTest, TimedWindowEndsAgentSide) {
  int64_t before = NowUnixMs();
  CommandResult r = CliFor(target(), "activate", {"--for", "2s", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json j = ParseJsonOutput(r);
  EXPECT_EQ(j["previous"]["active"], false);
  EXPECT_EQ(j["current"]["active"], true);
  int64_t end = j["current"]["window_end_unix_ms"].get<int64_t>();
  EXPECT_GE(end, before + 1500) << j.dump(2);
  EXPECT_LE(end, NowUnixMs() + 2500) << j.dump(2);
  EXPECT_EQ(StatusJson(target())["window_end_unix_ms"], end);

  // Nobody calls deactivate: the agent ends the window by itself.
  json status;
  bool ended = WaitUntil(
      [&] {
        status = StatusJson(target());
        return status["profiling_active"] == false;
      },
      seconds(20), milliseconds(100));
  EXPECT_TRUE(ended) << status.dump(2);
  EXPECT_GE(NowUnixMs(), end - 50) << "the window ended early";
  EXPECT_EQ(status["window_end_unix_ms"], 0) << status.dump(2);
}

TEST_P(ActivationTest, TimedWindowTextSaysUntilWhen) {
  CommandResult r = CliFor(target(), "activate", {"--for", "5m"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("until"), std::string::npos) << r;
  EXPECT_NE(r.out.find("5m"), std::string::npos) << r;
}

TEST_P(ActivationTest, NewDurationReplacesTheWindow) {
  CommandResult first = CliFor(target(), "activate", {"--for", "1h", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first;
  int64_t first_end = ParseJsonOutput(first)["current"]["window_end_unix_ms"].get<int64_t>();
  EXPECT_EQ(ParseJsonOutput(first)["window_replaced"], false);

  CommandResult second = CliFor(target(), "activate", {"--for", "2h", "--json"});
  ASSERT_EQ(second.exit_code, 0) << second;
  json j = ParseJsonOutput(second);
  EXPECT_EQ(j["window_replaced"], true) << j.dump(2);
  EXPECT_EQ(j["previous"]["active"], true);
  EXPECT_EQ(j["previous"]["window_end_unix_ms"], first_end);
  EXPECT_GT(j["current"]["window_end_unix_ms"].get<int64_t>(), first_end + 3000 * 1000);

  CommandResult text = CliFor(target(), "activate", {"--for", "30m"});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_NE(text.out.find("replac"), std::string::npos) << "the text must say the window was replaced\n"
                                                          << text;
}

TEST_P(ActivationTest, DeactivateKeepsSamples) {
  ASSERT_EQ(CliFor(target(), "activate").exit_code, 0);
  std::string report = DumpUntilJeprofNames(target(), shape().binary, shape().leak_function);
  ASSERT_NE(report.find(shape().leak_function), std::string::npos) << report;

  CommandResult off = CliFor(target(), "deactivate");
  ASSERT_EQ(off.exit_code, 0) << off;
  EXPECT_NE(off.out.find("deactivated"), std::string::npos) << off;
  EXPECT_NE(off.out.find("samples collected so far are kept"), std::string::npos) << off;
  json status = StatusJson(target());
  EXPECT_EQ(status["profiling_active"], false);
  EXPECT_EQ(status["profiling_enabled"], true);

  CommandResult again = CliFor(target(), "deactivate", {"--json"});
  ASSERT_EQ(again.exit_code, 0) << again;
  json j = ParseJsonOutput(again);
  EXPECT_EQ(j["previous"]["active"], false);
  EXPECT_EQ(j["current"]["active"], false);

  // One dump, no retry: the samples taken while active are still there.
  std::string path = dir().File("after.heap");
  CommandResult dump = CliFor(target(), "dump", {"--out", path});
  ASSERT_EQ(dump.exit_code, 0) << dump;
  std::string jeprof_path;
  ASSERT_TRUE(test_support::CanRun(test_support::Jeprof(), &jeprof_path));
  CommandResult jeprof = RunCommand({jeprof_path, "--text", shape().binary, path}, {});
  EXPECT_NE(jeprof.out.find(shape().leak_function), std::string::npos) << jeprof;
}

TEST_P(ActivationTest, DeactivateEndsATimedWindow) {
  ASSERT_EQ(CliFor(target(), "activate", {"--for", "1h"}).exit_code, 0);
  CommandResult off = CliFor(target(), "deactivate", {"--json"});
  ASSERT_EQ(off.exit_code, 0) << off;
  json j = ParseJsonOutput(off);
  EXPECT_EQ(j["previous"]["active"], true);
  EXPECT_GT(j["previous"]["window_end_unix_ms"].get<int64_t>(), 0);
  EXPECT_EQ(j["current"]["active"], false);
  EXPECT_EQ(j["current"]["window_end_unix_ms"], 0);
  EXPECT_EQ(StatusJson(target())["window_end_unix_ms"], 0);
}

INSTANTIATE_TEST_SUITE_P(AllShapes, ActivationTest,
                         ::testing::Values(Shape::kLinked, Shape::kPreloaded, Shape::kRunPlain,
                                           Shape::kRunGlibc),
                         ShapeName);

}  // namespace
}  // namespace memprof::integration
