// The agent's socket over the target's life, and MEMPROF_AGENT=off.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

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
  ExpectCliError(CliFor(*t, "status"), 3,
                 "memprof agent loaded but not serving: MEMPROF_AGENT=off in its environment "
                 "switches it off");
  std::optional<ExitStatus> status = t->Terminate();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 0) << t->process().StderrText();
}

INSTANTIATE_TEST_SUITE_P(AgentShapes, AgentOffTest,
                         ::testing::Values(Shape::kLinked, Shape::kPreloaded, Shape::kRunPlain),
                         ShapeName);

// lifecycle_target: stop/start on SIGUSR1, exec on SIGUSR2.
class AgentLifecycleTest : public IntegrationTest {
 protected:
  TargetProcess* StartLifecycle(std::vector<std::string> exec_argv = {},
                                std::map<std::string, std::string> env = {}) {
    TargetOptions options;
    options.argv = {kLifecycleTarget};
    options.argv.insert(options.argv.end(), exec_argv.begin(), exec_argv.end());
    options.env = std::move(env);
    options.env["MALLOC_CONF"] = kProfilingReadyConf;
    return Start(options);
  }
  bool StdoutHas(TargetProcess& t, const std::string& text) {
    return WaitUntil([&] { return t.process().StdoutText().find(text) != std::string::npos; },
                     seconds(10));
  }
};

TEST_F(AgentLifecycleTest, StartStopAndStartAgain) {
  TargetProcess* t = StartLifecycle();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(CliFor(*t, "activate").exit_code, 0);
  ASSERT_EQ(::kill(t->pid(), SIGUSR1), 0);
  ASSERT_TRUE(StdoutHas(*t, "stopped"));
  EXPECT_FALSE(FileExists(t->socket_path())) << "stop removes the socket";
  ExpectCliError(CliFor(*t, "status"), 3,
                 "memprof agent loaded but not serving: no socket at " + t->socket_path() +
                     "; the program links libmemprof_agent.so and its agent is not running");
  ASSERT_EQ(::kill(t->pid(), SIGUSR1), 0);
  ASSERT_TRUE(StdoutHas(*t, "started 0")) << t->process().StderrText();
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(t->socket_path()); }, seconds(10)));
  EXPECT_EQ(StatusJson(*t)["pid"], t->pid());
  // jemalloc's state outlives the agent: sampling is still on.
  EXPECT_EQ(StatusJson(*t)["profiling_active"], true);
}

TEST_F(AgentLifecycleTest, ExecIntoAProgramWithTheAgentHandsTheSocketOver) {
  // The exec'd program inherits LD_PRELOAD, so its own agent starts for the
  // same pid and replaces the socket.
  TargetProcess* t = StartLifecycle({kPlainTarget}, {{"LD_PRELOAD", kAgentPreload}});
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(::kill(t->pid(), SIGUSR2), 0);
  ASSERT_TRUE(WaitUntil(
      [&] {
        CommandResult r = Cli({"status", "--pid", std::to_string(t->pid()), "--json"});
        return r.exit_code == 0 &&
               ParseJsonOutput(r)["executable"].get<std::string>().ends_with("plain_target");
      },
      seconds(20)));
  EXPECT_EQ(dir().List(), std::vector<std::string>{std::to_string(t->pid()) + ".sock"});
}

TEST_F(AgentLifecycleTest, ExecIntoAProgramWithoutTheAgentLeavesAStaleSocketThatListRemoves) {
  TargetProcess* t = StartLifecycle({"/bin/sleep", "600"});
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(::kill(t->pid(), SIGUSR2), 0);
  ASSERT_TRUE(WaitUntil(
      [&] { return ReadFile("/proc/" + std::to_string(t->pid()) + "/comm") == "sleep\n"; },
      seconds(10)));
  ExpectCliError(CliFor(*t, "status"), 3, "stale socket");
  CommandResult list = Cli({"list", "--json", "--no-prune"});
  ASSERT_EQ(list.exit_code, 0) << list;
  auto targets = ParseJsonOutput(list)["targets"];
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0]["stale"], true);
  CommandResult prune = Cli({"list", "--json"});  // removes what it can prove stale
  ASSERT_EQ(prune.exit_code, 0) << prune;
  EXPECT_EQ(ParseJsonOutput(prune)["targets"], nlohmann::json::array()) << prune;
  EXPECT_EQ(dir().List(), std::vector<std::string>{});
}

TEST_F(AgentLifecycleTest, SigkillLeavesAStaleSocketThatListRecognisesAndPruneRemoves) {
  TargetProcess* t = StartShape(Shape::kPreloaded);
  ASSERT_NE(t, nullptr);
  const pid_t pid = t->pid();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return t->process().HasExited(); }, seconds(10)));
  CommandResult list = Cli({"list", "--no-prune"});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_NE(list.out.find("problem: pid " + std::to_string(pid) + ": stale socket"),
            std::string::npos)
      << list;
  ExpectCliError(Cli({"status", "--pid", std::to_string(pid)}), 3, "no process with pid");
  ASSERT_EQ(Cli({"list", "--prune"}).exit_code, 0);
  EXPECT_EQ(dir().List(), std::vector<std::string>{});
}

}  // namespace
}  // namespace memprof::integration
