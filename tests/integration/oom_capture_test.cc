// The profile from just before an OOM kill: oom_target, moved into a memory
// cgroup of its own with a 96 MiB limit and no swap, grows by 1 MiB every
// 50 ms in GrowTowardsTheLimit until the kernel's OOM killer ends it.
// `activate --capture-near-limit 90%` arms its agent, and `dump --captured
// --follow --out-dir` writes each capture while the process still lives, so
// that after the kill a capture taken at or above 90% of the limit is on
// disk, and its report names the growing function. Run once per cgroup
// version the machine has (root only); the fixture kills the target and
// removes the cgroup, also on failure.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/memory_cgroup.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kOomTarget = MEMPROF_IT_OOM_TARGET;
constexpr const char* kGrowingFunction = "GrowTowardsTheLimit";
constexpr uint64_t kLimitBytes = uint64_t{96} << 20;

class OomCaptureTest : public IntegrationTest, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    auto cgroup = MemoryCgroup::Create(GetParam(), kLimitBytes);
    if (!cgroup) GTEST_SKIP() << "no memory cgroup to test in: " << cgroup.error().message;
    cgroup_ = std::move(*cgroup);
  }
  // The target first (killed and reaped), then the cgroup.
  void TearDown() override {
    follow_.reset();
    IntegrationTest::TearDown();
  }

  // Started as usual, then moved into the cgroup: what it allocated so far
  // stays charged where it was, so the limit is all for its growth.
  TargetProcess* StartInCgroup() {
    TargetOptions options;
    options.argv = {kOomTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", "prof:true,prof_active:false,lg_prof_sample:17"}};
    options.stdin_pipe = true;
    TargetProcess* target = Start(options);
    if (target == nullptr) return nullptr;
    auto added = cgroup_->Add(target->pid());
    EXPECT_TRUE(added) << added.error().message;
    return added ? target : nullptr;
  }

  // The flat in-use bytes `report` gives `function` in `heap_file`.
  double FlatBytes(const std::string& heap_file, const std::string& function) {
    CommandResult r = Cli({"report", "--format", "json", heap_file});
    EXPECT_EQ(r.exit_code, 0) << r;
    for (const auto& row : ParseJsonOutput(r).value("functions", json::array())) {
      if (row.value("name", "") == function) return row.value("flat", 0.0);
    }
    return 0;
  }

  std::unique_ptr<MemoryCgroup> cgroup_;
  std::unique_ptr<Subprocess> follow_;
};

TEST_P(OomCaptureTest, TheCaptureFromJustBeforeTheKillIsOnDisk) {
  TargetProcess* target = StartInCgroup();
  ASSERT_NE(target, nullptr);
  // status knows the limit: this cgroup's, read by the agent from inside.
  const json limit = StatusJson(*target)["memory_limit"];
  ASSERT_TRUE(limit.is_object()) << limit.dump();
  ASSERT_EQ(StatusJson(*target)["memory_limit_error"], "");
  EXPECT_EQ(limit["cgroup"], cgroup_->path());
  EXPECT_EQ(limit["cgroup_version"], GetParam());
  EXPECT_EQ(limit["limit_bytes"], kLimitBytes);

  CommandResult armed =
      CliFor(*target, "activate", {"--capture-near-limit", "90%", "--keep", "8"});
  ASSERT_EQ(armed.exit_code, 0) << armed;
  EXPECT_NE(armed.out.find("when the memory cgroup's usage reaches 90% of its limit"),
            std::string::npos)
      << armed;
  const std::string out_dir = dir().File("captures");
  std::filesystem::create_directory(out_dir);
  follow_ = SpawnCli({"dump", "--pid", std::to_string(target->pid()), "--captured", "--follow",
                      "--out-dir", out_dir, "--json"});
  ASSERT_NE(follow_, nullptr);

  ASSERT_TRUE(target->process().WriteStdin("grow\n"));
  std::optional<ExitStatus> killed = target->process().Wait(seconds(60));
  ASSERT_TRUE(killed.has_value()) << "not killed within 60 s: " << StatusJson(*target).dump();
  EXPECT_EQ(killed->term_signal, SIGKILL) << target->process().StderrText();
  EXPECT_GE(cgroup_->OomKills(), 1u);

  // --follow ends by itself once the process is gone, having written each
  // capture as it came.
  std::optional<ExitStatus> followed = follow_->Wait(seconds(20));
  ASSERT_TRUE(followed.has_value()) << follow_->StderrText();
  EXPECT_EQ(followed->exit_code, 0) << follow_->StdoutText() << follow_->StderrText();
  // The kill may land between captures or while one is fetched; both endings
  // name the process and count what was written.
  const std::string ended = "pid " + std::to_string(target->pid()) + " ended";
  EXPECT_NE(follow_->StderrText().find(ended), std::string::npos) << follow_->StderrText();
  EXPECT_NE(follow_->StderrText().find(" captures written to " + out_dir), std::string::npos)
      << follow_->StderrText();
  json highest;
  std::istringstream lines(follow_->StdoutText());
  for (std::string line; std::getline(lines, line);) {
    const json document = json::parse(line);
    ASSERT_EQ(document["captures"].size(), 1u) << line;
    const json& capture = document["captures"][0];
    EXPECT_EQ(capture["trigger"], "near_limit") << line;
    EXPECT_TRUE(std::filesystem::exists(capture["path"].get<std::string>())) << line;
    if (highest.is_null() || capture["cgroup_usage_bytes"] > highest["cgroup_usage_bytes"]) {
      highest = capture;
    }
  }
  ASSERT_FALSE(highest.is_null()) << "no capture written: " << follow_->StderrText();
  EXPECT_EQ(highest["cgroup_limit_bytes"], kLimitBytes) << highest.dump();
  EXPECT_GE(highest["cgroup_usage_bytes"].get<uint64_t>() * 100, kLimitBytes * 90)
      << highest.dump();
  // Most of what the process holds at the end is the growth.
  EXPECT_GE(FlatBytes(highest["path"], kGrowingFunction), 32.0 * (1 << 20)) << highest.dump();
}

std::string VersionName(const ::testing::TestParamInfo<int>& info) {
  return "CgroupV" + std::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(Versions, OomCaptureTest, ::testing::Values(1, 2), VersionName);

}  // namespace
}  // namespace memprof::integration
