// `memprofctl run --allocator tcmalloc`: the plan (what is preloaded, what
// is set) and the refusals, against real programs.
#include <gtest/gtest.h>

#include "cli/commands/run_command.h"
#include "cli/launch/run_planner.h"
#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

class RunTcmallocTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string agent_ = dir_.File("lib/libmemprof_agent.so.0");
  std::string tcmalloc_ = dir_.File("lib/libtcmalloc.so.4");
  RunEnvironment env_;

  void SetUp() override {
    testing::MakeDirs(dir_.File("lib"));
    testing::MakeDirs(dir_.File("bin"));
    testing::WriteFile(agent_, "not really a library");
    testing::WriteFile(tcmalloc_, "not really a library either");
    env_.variables = {"PATH=/usr/bin:/bin", "MALLOC_CONF=narenas:2"};
    env_.self_exe = dir_.File("bin/memprofctl");
    env_.agent_relative_paths = {"../lib/libmemprof_agent.so.0"};
    env_.jemalloc_path = MEMPROF_TEST_JEMALLOC_LIB;
    env_.tcmalloc_path = tcmalloc_;
  }

  static std::string Var(const ExecPlan& plan, const std::string& name) {
    for (const std::string& v : plan.env) {
      if (v.starts_with(name + "=")) return v.substr(name.size() + 1);
    }
    return "<unset>";
  }
};

TEST_F(RunTcmallocTest, PreloadsTcmallocAndTheAgentAndSetsTheSamplePeriod) {
  auto plan = PlanRun({"true"}, env_, RunAllocator::kTcmalloc);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(Var(*plan, "LD_PRELOAD"), tcmalloc_ + ":" + agent_);
  EXPECT_EQ(Var(*plan, "TCMALLOC_SAMPLE_PARAMETER"), "524288");
  EXPECT_EQ(Var(*plan, "MALLOC_CONF"), "narenas:2") << "jemalloc's setting is left alone";
  EXPECT_EQ(plan->allocator_setting, "TCMALLOC_SAMPLE_PARAMETER=524288");
  EXPECT_TRUE(plan->warnings.empty());
}

TEST_F(RunTcmallocTest, TheUsersSamplePeriodWinsAndZeroIsWarnedAbout) {
  env_.variables.push_back("TCMALLOC_SAMPLE_PARAMETER=131072");
  auto plan = PlanRun({"true"}, env_, RunAllocator::kTcmalloc);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(Var(*plan, "TCMALLOC_SAMPLE_PARAMETER"), "131072");
  EXPECT_TRUE(plan->warnings.empty());

  env_.variables.back() = "TCMALLOC_SAMPLE_PARAMETER=0";
  auto off = PlanRun({"true"}, env_, RunAllocator::kTcmalloc);
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_EQ(Var(*off, "TCMALLOC_SAMPLE_PARAMETER"), "0");
  ASSERT_EQ(off->warnings.size(), 1u);
  EXPECT_NE(off->warnings[0].find("turns tcmalloc's sampling off"), std::string::npos)
      << off->warnings[0];
}

TEST_F(RunTcmallocTest, NotInstalledIsAPreconditionThatNamesThePackage) {
  env_.tcmalloc_path = dir_.File("lib/absent.so");
  auto plan = PlanRun({"true"}, env_, RunAllocator::kTcmalloc);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(plan.error().message,
            "--allocator tcmalloc: gperftools' libtcmalloc.so.4 was not found to preload; "
            "install it (apt-get install libgoogle-perftools4) or set MEMPROF_TCMALLOC_LIB");
}

TEST_F(RunTcmallocTest, RefusesProgramsWithAnotherAllocatorOfTheirOwn) {
  auto jemalloc = PlanRun({MEMPROF_TEST_JEMALLOC_PROBE}, env_, RunAllocator::kTcmalloc);
  ASSERT_FALSE(jemalloc);
  EXPECT_EQ(jemalloc.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(jemalloc.error().message.find("uses jemalloc"), std::string::npos);

  env_.variables.push_back("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4");
  auto minimal = PlanRun({"true"}, env_, RunAllocator::kTcmalloc);
  ASSERT_FALSE(minimal);
  EXPECT_EQ(minimal.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(minimal.error().message.find("libtcmalloc_minimal, which cannot sample"),
            std::string::npos)
      << minimal.error().message;
}

TEST_F(RunTcmallocTest, DoesNotPreloadTcmallocTwice) {
  env_.variables.push_back("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4");
  auto plan = PlanRun({"true"}, env_, RunAllocator::kTcmalloc);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(Var(*plan, "LD_PRELOAD"), agent_ + ":/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4");
}

TEST(RunWordsTest, AllocatorOptionBeforeTheCommand) {
  auto spaced = ParseRunWords({"--allocator", "tcmalloc", "--", "redis-server", "--port", "1"});
  ASSERT_TRUE(spaced) << spaced.error().message;
  EXPECT_EQ(spaced->allocator, RunAllocator::kTcmalloc);
  EXPECT_EQ(spaced->command, (std::vector<std::string>{"redis-server", "--port", "1"}));
  auto joined = ParseRunWords({"--allocator=jemalloc", "ls"});
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->allocator, RunAllocator::kJemalloc);
  EXPECT_EQ(joined->command, (std::vector<std::string>{"ls"}));
  // Anything else is the command, verbatim.
  auto plain = ParseRunWords({"ls", "--allocator", "tcmalloc"});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->allocator, RunAllocator::kJemalloc);
  EXPECT_EQ(plain->command.size(), 3u);
}

TEST(RunWordsTest, UnknownOrMissingAllocatorIsAUsageError) {
  auto unknown = ParseRunWords({"--allocator", "hoard", "--", "ls"});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(unknown.error().message, "run: unknown allocator 'hoard' (valid: jemalloc, tcmalloc)");
  auto missing = ParseRunWords({"--allocator"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace memprof::cli
