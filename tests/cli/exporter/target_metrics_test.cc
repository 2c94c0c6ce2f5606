#include "cli/exporter/target_metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <sstream>

#include "cli/commands/exporter_command.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using memprof::v1::StatsResponse;
using memprof::v1::StatusResponse;

// Answers per pid: 43 does not answer; the others are jemalloc targets whose
// allocated bytes are their pid. Counts calls and the largest concurrency.
class PerPidClient : public testing::FakeProfileClient {
 public:
  struct Shared {
    std::atomic<int> in_flight{0};
    std::atomic<int> max_in_flight{0};
    std::atomic<int> stats_calls{0};
  };
  explicit PerPidClient(Shared& shared) : shared_(shared) {}

  Result<StatsResponse> Stats(const Target& target, const memprof::v1::StatsRequest&) override {
    ++shared_.stats_calls;
    const int now = ++shared_.in_flight;
    int seen = shared_.max_in_flight.load();
    while (now > seen && !shared_.max_in_flight.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::yield();
    --shared_.in_flight;
    if (target.pid == 43) return Fail(ErrorCode::kUnavailable, "deadline exceeded");
    StatsResponse s;
    s.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
    s.mutable_summary()->set_allocated(static_cast<uint64_t>(target.pid));
    s.set_rss_bytes(4096);
    return s;
  }
  Result<StatusResponse> Status(const Target&) override {
    StatusResponse s;
    s.set_profiling_active(true);
    return s;
  }

 private:
  Shared& shared_;
};

class TargetMetricsTest : public testing::CommandTest {
 protected:
  PerPidClient::Shared shared_;
  ClientFactory factory_ = [this] { return std::make_unique<PerPidClient>(shared_); };
};

TEST_F(TargetMetricsTest, EveryLiveTargetOnceUnreachableOnesAreDownStaleOnesLeftOut) {
  AddAgent(43, "stuck");
  AddAgent(44, "other");
  testing::MakeSocketFile(sockets_ + "/45.sock");  // process 45 has exited
  auto metrics = CollectTargetMetrics(discovery_, factory_, 8);
  ASSERT_TRUE(metrics) << metrics.error().message;
  ASSERT_EQ(metrics->size(), 3u);
  EXPECT_EQ((*metrics)[0].pid, 42);
  EXPECT_TRUE((*metrics)[0].up);
  EXPECT_EQ((*metrics)[0].command, "demo");
  EXPECT_EQ((*metrics)[0].allocator, "jemalloc");
  EXPECT_TRUE((*metrics)[0].profiling_active);
  EXPECT_EQ((*metrics)[0].figures.allocated, 42u);
  EXPECT_EQ((*metrics)[0].figures.rss_bytes, 4096u);
  EXPECT_EQ((*metrics)[1].pid, 43);
  EXPECT_FALSE((*metrics)[1].up);
  EXPECT_EQ((*metrics)[1].command, "stuck");
  EXPECT_EQ((*metrics)[2].pid, 44);
  EXPECT_TRUE((*metrics)[2].up);
  EXPECT_EQ(shared_.stats_calls.load(), 3) << "one Stats call per live target";
}

TEST_F(TargetMetricsTest, ConcurrencyIsBounded) {
  for (pid_t pid = 100; pid < 140; ++pid) AddAgent(pid, "t" + std::to_string(pid));
  auto metrics = CollectTargetMetrics(discovery_, factory_, 3);
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->size(), 41u);
  EXPECT_LE(shared_.max_in_flight.load(), 3);
  EXPECT_EQ(shared_.stats_calls.load(), 41);
}

// An agent that says in its Stats answer whether profiling is active is
// asked nothing else; an older one (no such field) is asked Status too.
TEST_F(TargetMetricsTest, OneCallPerTargetWhenStatsSaysWhetherProfilingIsActive) {
  testing::FakeProfileClient fake;
  memprof::v1::StatsResponse stats;
  stats.set_profiling_active(true);
  fake.stats_result = stats;
  auto metrics = QueryTargetMetrics(Target{7, "/s/7.sock", "demo"}, fake);
  ASSERT_TRUE(metrics) << metrics.error().message;
  EXPECT_TRUE(metrics->profiling_active);
  EXPECT_EQ(fake.rpcs, std::vector<std::string>{"Stats"});
  EXPECT_FALSE(metrics->captures_held);  // an agent before peak capture

  stats.set_captures_held(2);
  stats.set_captures_taken_total(5);
  fake.stats_result = stats;
  auto capturing = QueryTargetMetrics(Target{7, "/s/7.sock", "demo"}, fake);
  ASSERT_TRUE(capturing) << capturing.error().message;
  EXPECT_EQ(capturing->captures_held, 2u);
  EXPECT_EQ(capturing->captures_taken_total, 5u);

  testing::FakeProfileClient old_agent;
  memprof::v1::StatusResponse status;
  status.set_profiling_active(true);
  old_agent.status_result = status;
  auto old_metrics = QueryTargetMetrics(Target{8, "/s/8.sock", "old"}, old_agent);
  ASSERT_TRUE(old_metrics) << old_metrics.error().message;
  EXPECT_TRUE(old_metrics->profiling_active);
  EXPECT_EQ(old_agent.rpcs, (std::vector<std::string>{"Stats", "Status"}));
}

TEST_F(TargetMetricsTest, NoTargetsIsAnEmptyScrape) {
  testing::TempDir empty;
  TargetDiscovery none(proc_, empty.path());
  auto metrics = CollectTargetMetrics(none, factory_, 8);
  ASSERT_TRUE(metrics);
  EXPECT_TRUE(metrics->empty());
}

TEST_F(TargetMetricsTest, ExporterRefusesARemoteAddressWithoutAllowRemote) {
  std::ostringstream out;
  std::ostringstream err;
  std::stop_source stop;
  ExporterOptions options;
  options.listen = "0.0.0.0:0";
  TimedClientFactory make = [this](std::chrono::milliseconds) {
    return std::make_unique<PerPidClient>(shared_);
  };
  auto result = RunExporter(options, discovery_, make, Console{out, err}, stop.get_token());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find("--listen 0.0.0.0:0 is reachable from other hosts"),
            std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("--allow-remote"), std::string::npos);
  options.listen = "localhost";
  result = RunExporter(options, discovery_, make, Console{out, err}, stop.get_token());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("invalid listen address 'localhost'"), std::string::npos);
  EXPECT_EQ(err.str(), "") << "nothing was served";
}

}  // namespace
}  // namespace memprof::cli
