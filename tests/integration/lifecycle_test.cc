// The agent's socket over the target's life, and MEMPROF_AGENT=off.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <string>

#include "tests/integration/integration_fixture.h"
#include "tests/integration/test_binaries.h"
#include "tests/integration/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class LifecycleTest : public ShapeTest {};

TEST_P(LifecycleTest, SocketIsPrivateAndServedByTheTarget) {
  struct stat st{};
  ASSERT_EQ(::lstat(target().socket_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(dir().List(), std::vector<std::string>{std::to_string(target().pid()) + ".sock"});
}

TEST_P(LifecycleTest, SocketIsRemovedWhenTheTargetExits) {
  std::string socket = target().socket_path();
  // Used first, so the agent has had connections and threads to wind down.
  ASSERT_EQ(CliFor(target(), "activate").exit_code, 0);
  ASSERT_EQ(CliFor(target(), "stats", {"--json"}).exit_code, 0);
  std::optional<ExitStatus> status = target().Terminate(seconds(20));
  ASSERT_TRUE(status.has_value()) << "target did not exit on SIGTERM\n"
                                  << target().process().StderrText();
  EXPECT_EQ(status->exit_code, 0) << "signal " << status->term_signal << "\n"
                                  << target().process().StderrText();
  EXPECT_TRUE(WaitUntil([&] { return !FileExists(socket); }, seconds(5)));
  EXPECT_EQ(dir().List(), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(AllShapes, LifecycleTest,
                         ::testing::Values(Shape::kLinked, Shape::kPreloaded, Shape::kRunPlain,
                                           Shape::kRunGlibc),
                         ShapeName);

class AgentOffTest : public IntegrationTest, public ::testing::WithParamInterface<Shape> {};

TEST_P(AgentOffTest, NoSocketAndTheTargetRunsFine) {
  ShapeInfo info = DescribeShape(GetParam());
  TargetOptions options;
  options.argv = info.argv;
  options.env = info.env;
  options.env["MEMPROF_AGENT"] = "off";
  options.expect_agent = false;
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  // The agent would have created its socket by now if it were on; give it a
  // generous moment anyway, polling.
  EXPECT_FALSE(WaitUntil([&] { return FileExists(t->socket_path()); }, milliseconds(1500)));
  EXPECT_EQ(dir().List(), std::vector<std::string>{});
  EXPECT_FALSE(t->process().HasExited()) << t->process().StderrText();
  ExpectCliError(CliFor(*t, "status"), 3, "has no memprof agent");
  std::optional<ExitStatus> status = t->Terminate();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 0) << t->process().StderrText();
}

INSTANTIATE_TEST_SUITE_P(AgentShapes, AgentOffTest,
                         ::testing::Values(Shape::kLinked, Shape::kPreloaded, Shape::kRunPlain),
                         ShapeName);

}  // namespace
}  // namespace memprof::integration
