#include "cli/launch/run_planner.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/commands/run_command.h"
#include "cli/io/logging.h"
#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

class RunPlannerTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  // Installed layout: <prefix>/bin/memprofctl, <prefix>/lib/<arch>/libmemprof_agent.so.0.
  std::string agent_ = dir_.File("lib/x86_64-linux-gnu/libmemprof_agent.so.0");
  RunEnvironment env_;

  void SetUp() override {
    testing::MakeDirs(dir_.File("lib/x86_64-linux-gnu"));
    testing::MakeDirs(dir_.File("bin"));
    testing::WriteFile(agent_, "not really a library");
    env_.variables = {"PATH=/usr/bin:/bin", "HOME=/root", "LD_PRELOAD=/opt/x.so",
                      "MALLOC_CONF=narenas:2"};
    env_.self_exe = dir_.File("bin/memprofctl");
    env_.agent_relative_paths = {"../lib/x86_64-linux-gnu/libmemprof_agent.so.0",
                                 "../agent/libmemprof_agent.so.0"};
    env_.jemalloc_path = MEMPROF_TEST_JEMALLOC_LIB;
  }

  std::string Var(const ExecPlan& plan, const std::string& name) {
    for (const std::string& v : plan.env) {
      if (v.rfind(name + "=", 0) == 0) return v.substr(name.size() + 1);
    }
    return "<unset>";
  }
};

TEST_F(RunPlannerTest, PreloadsJemallocAndTheAgentIntoAPlainProgram) {
  auto plan = PlanRun({"true", "--flag"}, env_);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->path, "/usr/bin/true");
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"true", "--flag"}));
  // jemalloc first, then the agent (found in <exe dir>/../lib/<arch>), then the user's.
  EXPECT_EQ(Var(*plan, "LD_PRELOAD"),
            std::string(MEMPROF_TEST_JEMALLOC_LIB) + ":" + agent_ + ":/opt/x.so");
  EXPECT_EQ(Var(*plan, "MALLOC_CONF"), "prof:true,prof_active:false,narenas:2");
  EXPECT_EQ(Var(*plan, "HOME"), "/root");
  EXPECT_EQ(std::count_if(plan->env.begin(), plan->env.end(),
                          [](const std::string& v) { return v.rfind("LD_PRELOAD=", 0) == 0; }),
            1);
}

TEST_F(RunPlannerTest, DoesNotPreloadJemallocIntoAProgramThatLinksIt) {
  auto plan = PlanRun({MEMPROF_TEST_JEMALLOC_PROBE}, env_);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(Var(*plan, "LD_PRELOAD"), agent_ + ":/opt/x.so");
}

TEST_F(RunPlannerTest, DoesNotPreloadJemallocTwiceWhenTheUserAlreadyDoes) {
  env_.variables = {"PATH=/usr/bin:/bin", "LD_PRELOAD=/usr/local/lib/libjemalloc.so.2"};
  auto plan = PlanRun({"true"}, env_);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(Var(*plan, "LD_PRELOAD"), agent_ + ":/usr/local/lib/libjemalloc.so.2");
}

TEST_F(RunPlannerTest, EnvironmentOverridesWinAndMustExist) {
  const std::string custom = dir_.File("custom-agent.so");
  testing::WriteFile(custom, "");
  env_.variables.push_back("MEMPROF_AGENT_LIB=" + custom);
  auto plan = PlanRun({"true"}, env_);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_NE(Var(*plan, "LD_PRELOAD").find(custom), std::string::npos);

  env_.variables.back() = "MEMPROF_AGENT_LIB=/missing/agent.so";
  auto missing = PlanRun({"true"}, env_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.error().message.find("/missing/agent.so"), std::string::npos);
}

TEST_F(RunPlannerTest, FindsTheAgentOfTheBuildTreeRelativeToMemprofctl) {
  // build/cli/memprofctl and build/agent/libmemprof_agent.so.0.
  testing::MakeDirs(dir_.File("build/cli"));
  testing::MakeDirs(dir_.File("build/agent"));
  const std::string built = dir_.File("build/agent/libmemprof_agent.so.0");
  testing::WriteFile(built, "not really a library either");
  env_.self_exe = dir_.File("build/cli/memprofctl");
  auto plan = PlanRun({"true"}, env_);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(Var(*plan, "LD_PRELOAD"),
            std::string(MEMPROF_TEST_JEMALLOC_LIB) + ":" + built + ":/opt/x.so");
}

TEST_F(RunPlannerTest, MissingAgentLibraryListsWhereItLooked) {
  env_.self_exe = "/elsewhere/bin/memprofctl";
  auto plan = PlanRun({"true"}, env_);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().message,
            "cannot find libmemprof_agent.so.0 (looked at "
            "/elsewhere/lib/x86_64-linux-gnu/libmemprof_agent.so.0, "
            "/elsewhere/agent/libmemprof_agent.so.0); set MEMPROF_AGENT_LIB to its path");
}

TEST_F(RunPlannerTest, StaticProgramIsAPreconditionFailure) {
  auto plan = PlanRun({MEMPROF_TEST_STATIC_PROBE}, env_);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(plan.error().message.find("statically linked"), std::string::npos);
  EXPECT_NE(plan.error().message.find("LD_PRELOAD"), std::string::npos);
}

TEST_F(RunPlannerTest, UnknownCommandIsAUsageError) {
  auto plan = PlanRun({"no-such-command-xyz"}, env_);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(plan.error().message, "command not found: no-such-command-xyz");
}

TEST_F(RunPlannerTest, MissingJemallocIsAPreconditionFailure) {
  env_.jemalloc_path = "";
  auto plan = PlanRun({"true"}, env_);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(plan.error().message.find("MEMPROF_JEMALLOC_LIB"), std::string::npos);
}

TEST(MergeLdPreloadTest, OursFirstThenTheUsersWithoutDuplicates) {
  EXPECT_EQ(MergeLdPreload({"/a.so", "/b.so"}, ""), "/a.so:/b.so");
  EXPECT_EQ(MergeLdPreload({"/a.so"}, "/c.so /a.so:/d.so"), "/a.so:/c.so:/d.so");
}

TEST(RunEnvironmentTest, GetFindsExactNamesOnly) {
  RunEnvironment env;
  env.variables = {"PATHX=1", "PATH=/bin", "EMPTY="};
  EXPECT_EQ(env.Get("PATH"), "/bin");
  EXPECT_EQ(env.Get("EMPTY"), "");
  EXPECT_FALSE(env.Get("PAT"));
}

TEST_F(RunPlannerTest, RunRunHandsThePlanToTheExecutorAndWarns) {
  std::ostringstream log;
  ConfigureLogging(log, 0);
  env_.variables = {"PATH=/usr/bin:/bin", "MALLOC_CONF=prof:false"};
  std::optional<ExecPlan> executed;
  auto result = RunRun(RunOptions{{"true"}}, env_, [&](const ExecPlan& plan) -> Result<void> {
    executed = plan;
    return {};
  });
  ConfigureLogging(std::cerr, 0);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(executed);
  EXPECT_EQ(executed->malloc_conf, "prof:true,prof_active:false");
  EXPECT_NE(log.str().find("memprofctl: warning: ignoring 'prof:false'"), std::string::npos)
      << log.str();
}

TEST_F(RunPlannerTest, ExecFailureIsAClearError) {
  ExecPlan plan;
  plan.path = agent_;  // exists, not executable
  plan.argv = {"x"};
  auto result = ExecPlanNow(plan);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(result.error().message.rfind("cannot execute " + plan.path + ": ", 0), 0u);
}

}  // namespace
}  // namespace memprof::cli
