#include "cli/targets/multi_target_run.h"

#include <gtest/gtest.h>

#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "cli/io/logging.h"
#include "tests/cli/testing/cli_test_util.h"
#include "tests/cli/testing/fake_profile_client.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using testing::FakeProfileClient;

// Remote targets need no discovery: each is looked up by asking its agent
// (the fake answers with the pid in its status_result).
class MultiTargetRunTest : public ::testing::Test {
 protected:
  testing::TempDir tmp_;
  TargetDiscovery discovery_{tmp_.File("proc"), tmp_.File("s")};
  std::ostringstream out_;
  std::ostringstream err_;
  Console console_{out_, err_};

  // Failures are logged (memprofctl: error: ...) to where the logger writes.
  void SetUp() override { ConfigureLogging(err_, 0); }
  void TearDown() override { ConfigureLogging(std::cerr, 0); }

  static TargetSelection Remote(std::vector<std::string> addresses) {
    TargetSelection selection;
    selection.multi = true;
    selection.tls = std::make_shared<TlsMaterial>();
    for (std::string& a : addresses) selection.specs.push_back(TargetSpec::Address(std::move(a)));
    return selection;
  }

  // Every client says its pid is the port of the address it is asked about.
  StoppableClientFactory Clients(std::function<void(FakeProfileClient&)> setup = {}) {
    return [setup](milliseconds, std::stop_token) -> std::unique_ptr<ProfileClient> {
      auto fake = std::make_unique<FakeProfileClient>();
      if (setup) setup(*fake);
      return fake;
    };
  }
};

pid_t PortOf(const Target& t) { return std::stoi(t.address.substr(t.address.rfind(':') + 1)); }

TEST_F(MultiTargetRunTest, EveryTargetRunsAndPrintsOneJsonLine) {
  MultiTargetPlan plan;
  plan.json = true;
  const TargetTask task = [](const Target& t, ProfileClient&, const Console& c,
                             const std::stop_token&) -> Result<void> {
    c.out << "{\n  \"answer\": " << PortOf(t) << "\n}\n";
    return {};
  };
  auto result = RunOnTargets(Remote({"a:1", "b:2", "c:3"}), plan, discovery_, Clients(), task,
                             console_, std::stop_token());
  ASSERT_TRUE(result) << result.error().message;
  std::istringstream lines(out_.str());
  std::set<int> answers;
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["exit_code"], 0);
    EXPECT_EQ(j["error"], "");
    EXPECT_EQ(j["address"], j["target"]);
    answers.insert(j["result"]["answer"].get<int>());
  }
  EXPECT_EQ(answers, (std::set<int>{1, 2, 3}));
}

TEST_F(MultiTargetRunTest, FailuresAreReportedAndMakeItAPartialFailure) {
  MultiTargetPlan plan;
  plan.json = true;
  const TargetTask task = [](const Target& t, ProfileClient&, const Console&,
                             const std::stop_token&) -> Result<void> {
    if (PortOf(t) == 2) return Fail(ErrorCode::kPermissionDenied, "no entry");
    return {};
  };
  auto result = RunOnTargets(Remote({"a:1", "b:2", "c:3"}), plan, discovery_, Clients(), task,
                             console_, std::stop_token());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kPartialFailure);
  EXPECT_EQ(result.error().message, "1 of 3 targets failed: b:2 (permission_denied)");
  EXPECT_NE(out_.str().find(R"("error":"no entry","error_code":"permission_denied","exit_code":4)"),
            std::string::npos)
      << out_.str();
}

TEST_F(MultiTargetRunTest, ATargetThatCannotBeLookedUpFailsAlone) {
  MultiTargetPlan plan;
  plan.json = true;
  int ran = 0;
  std::mutex mutex;
  const TargetTask task = [&](const Target&, ProfileClient&, const Console&,
                              const std::stop_token&) -> Result<void> {
    std::lock_guard lock(mutex);
    ++ran;
    return {};
  };
  TargetSelection selection = Remote({"a:1"});
  selection.specs.push_back(TargetSpec::Pid(424242));  // not in the fixture's /proc
  auto result =
      RunOnTargets(selection, plan, discovery_, Clients(), task, console_, std::stop_token());
  ASSERT_FALSE(result);
  EXPECT_EQ(ran, 1);
  EXPECT_NE(out_.str().find(R"("error":"no process with pid 424242")"), std::string::npos)
      << out_.str();
}

// A target that never finishes is cancelled at the per-target deadline,
// and reported as timed out; the others finish normally.
TEST_F(MultiTargetRunTest, AHangingTargetIsCutOffAtItsDeadline) {
  MultiTargetPlan plan;
  plan.per_target_timeout = milliseconds(200);
  const TargetTask task = [](const Target& t, ProfileClient&, const Console& c,
                             const std::stop_token& stop) -> Result<void> {
    if (PortOf(t) == 2) {
      std::mutex m;
      std::unique_lock lock(m);
      std::condition_variable_any cv;
      cv.wait(lock, stop, [] { return false; });
      return Fail(ErrorCode::kCancelled, "interrupted");
    }
    c.out << "done " << PortOf(t) << '\n';
    return {};
  };
  auto result = RunOnTargets(Remote({"a:1", "b:2", "c:3"}), plan, discovery_, Clients(), task,
                             console_, std::stop_token());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "1 of 3 targets failed: b:2 (unavailable)");
  EXPECT_NE(out_.str().find("done 1\n"), std::string::npos);
  EXPECT_NE(out_.str().find("done 3\n"), std::string::npos);
  EXPECT_NE(
      err_.str().find("the agent at b:2: timed out after 200ms (--timeout bounds the work for "
                      "each target)"),
      std::string::npos)
      << err_.str();
}

TEST_F(MultiTargetRunTest, NoMoreThanParallelTargetsRunAtOnce) {
  MultiTargetPlan plan;
  plan.parallel = 2;
  std::mutex mutex;
  int running = 0;
  int peak = 0;
  const TargetTask task = [&](const Target&, ProfileClient&, const Console&,
                              const std::stop_token&) -> Result<void> {
    {
      std::lock_guard lock(mutex);
      peak = std::max(peak, ++running);
    }
    std::this_thread::sleep_for(milliseconds(20));
    std::lock_guard lock(mutex);
    --running;
    return {};
  };
  auto result = RunOnTargets(Remote({"a:1", "b:2", "c:3", "d:4", "e:5", "f:6"}), plan, discovery_,
                             Clients(), task, console_, std::stop_token());
  ASSERT_TRUE(result);
  EXPECT_LE(peak, 2);
}

TEST_F(MultiTargetRunTest, AStopRequestCancelsTheRun) {
  MultiTargetPlan plan;
  std::stop_source stop;
  stop.request_stop();
  int ran = 0;
  const TargetTask task = [&](const Target&, ProfileClient&, const Console&,
                              const std::stop_token&) -> Result<void> {
    ++ran;
    return {};
  };
  auto result = RunOnTargets(Remote({"a:1", "b:2"}), plan, discovery_, Clients(), task, console_,
                             stop.get_token());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(ran, 0);
}

}  // namespace
}  // namespace memprof::cli
