// stats --watch, --format and the prometheus output, with a fake agent.
#include "cli/collect/stats_watch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands/stats_command.h"
#include "tests/cli/collect/fake_tick_clock.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using memprof::v1::StatsResponse;
using std::chrono::seconds;
using Output = StatsWatchPlan::Output;

StatsResponse Reading(uint64_t allocated) {
  StatsResponse s;
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
  s.mutable_summary()->set_allocated(allocated);
  s.mutable_summary()->set_active(allocated + 4096);
  s.set_rss_bytes(10 << 20);
  return s;
}

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

class StatsWatchTest : public testing::CommandTest {
 protected:
  testing::FakeTickClock ticks_;
  std::stop_source stop_;
  const Target target_{kPid, sockets_ + "/42.sock", "demo"};

  void SetUp() override {
    CommandTest::SetUp();
    client_.stats_sequence = [](int n) -> Result<StatsResponse> { return Reading(1000 * n); };
  }

  Result<void> Watch(Output output, uint64_t count) {
    StatsWatchPlan plan;
    plan.every = seconds(2);
    plan.count = count;
    plan.output = output;
    StatsWatchClocks clocks;
    clocks.ticks = ticks_.Clock();
    return RunStatsWatch(plan, target_, discovery_, client_, out_, stop_.get_token(), clocks);
  }

  StatsOptions Options(const std::string& format, const std::string& watch) {
    StatsOptions o;
    o.target.pid = kPid;
    o.format = format;
    o.watch = watch;
    return o;
  }
};

TEST_F(StatsWatchTest, JsonLinesWithDeltasSinceThePreviousReading) {
  ASSERT_TRUE(Watch(Output::kJsonLines, 3));
  const auto lines = JsonLines(out_.str());
  ASSERT_EQ(lines.size(), 3u) << out_.str();
  EXPECT_EQ(lines[0]["delta"]["allocated"], 0);
  EXPECT_EQ(lines[0]["interval_seconds"], 0.0);
  EXPECT_EQ(lines[2]["sample"], 3);
  EXPECT_EQ(lines[2]["allocated"], 3000);
  EXPECT_EQ(lines[2]["delta"]["allocated"], 1000);
  EXPECT_DOUBLE_EQ(lines[2]["interval_seconds"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(lines[2]["per_second"]["allocated"].get<double>(), 500.0);
  EXPECT_EQ(client_.last_stats.raw_format(), memprof::v1::RAW_STATS_FORMAT_NONE)
      << "a watch asks for the summary only";
}

TEST_F(StatsWatchTest, LiveTableIsRedrawnInPlace) {
  ASSERT_TRUE(Watch(Output::kLiveTable, 2));
  const std::string text = out_.str();
  EXPECT_EQ(text.find("\x1b["), text.find("\x1b[10F\x1b[J")) << "one redraw, over 10 lines";
  EXPECT_NE(text.find("\x1b[10F\x1b[J"), std::string::npos) << text;
  EXPECT_NE(text.find("sample 2"), std::string::npos);
  EXPECT_TRUE(text.starts_with("pid 42 (demo), jemalloc: sample 1 "))
      << "the first frame is drawn without moving the cursor\n"
      << text;
}

TEST_F(StatsWatchTest, TablesOnAPipeFollowEachOtherWithoutEscapes) {
  ASSERT_TRUE(Watch(Output::kTables, 2));
  EXPECT_EQ(out_.str().find('\x1b'), std::string::npos);
  EXPECT_NE(out_.str().find("\n\npid 42 (demo), jemalloc: sample 2"), std::string::npos)
      << out_.str();
}

TEST_F(StatsWatchTest, StopEndsTheWatchSuccessfully) {
  ticks_.on_sleep = [this] {
    if (ticks_.sleeps.size() == 2) stop_.request_stop();
  };
  ASSERT_TRUE(Watch(Output::kJsonLines, 0));
  EXPECT_EQ(JsonLines(out_.str()).size(), 2u);
}

TEST_F(StatsWatchTest, TargetGoneIsExit3AfterTheReadingsPrinted) {
  client_.stats_sequence = [this](int n) -> Result<StatsResponse> {
    if (n < 3) return Reading(1000);
    std::filesystem::remove_all(proc_ + "/42");
    return Fail(ErrorCode::kUnavailable, "stale socket");
  };
  auto result = Watch(Output::kJsonLines, 0);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(result.error().message,
            "pid 42 (demo) has gone away (no process with pid 42); stopped after 2 readings");
  EXPECT_EQ(JsonLines(out_.str()).size(), 2u);
}

TEST_F(StatsWatchTest, FormatsAndAliases) {
  StatsOptions o = Options("", "");
  EXPECT_EQ(*ResolveStatsFormat(o), StatsFormat::kTable);
  o.target.json = true;
  EXPECT_EQ(*ResolveStatsFormat(o), StatsFormat::kJson);
  o.target.json = false;
  o.raw = true;
  EXPECT_EQ(*ResolveStatsFormat(o), StatsFormat::kRaw);
  EXPECT_EQ(*ResolveStatsFormat(Options("prometheus", "")), StatsFormat::kPrometheus);
  EXPECT_EQ(*ResolveStatsFormat(Options("json", "")), StatsFormat::kJson);
  auto bad = ResolveStatsFormat(Options("yaml", ""));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "unknown stats format 'yaml' (valid: table, json, raw, prometheus)");
}

TEST_F(StatsWatchTest, WatchOutputDependsOnTheTerminal) {
  EXPECT_EQ(MakeStatsWatchPlan(Options("", "2s"), true)->output, Output::kLiveTable);
  EXPECT_EQ(MakeStatsWatchPlan(Options("", "2s"), true, false)->output, Output::kTables)
      << "TERM=dumb: no cursor movement, one table after another";
  EXPECT_EQ(MakeStatsWatchPlan(Options("", "2s"), false)->output, Output::kJsonLines);
  EXPECT_EQ(MakeStatsWatchPlan(Options("table", "2s"), false)->output, Output::kTables);
  EXPECT_EQ(MakeStatsWatchPlan(Options("json", "2s"), true)->output, Output::kJsonLines);
  EXPECT_EQ(MakeStatsWatchPlan(Options("", "2s"), false)->every, seconds(2));
  for (const char* format : {"raw", "prometheus"}) {
    auto plan = MakeStatsWatchPlan(Options(format, "2s"), false);
    ASSERT_FALSE(plan) << format;
    EXPECT_EQ(plan.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(plan.error().message.find("cannot be combined with --format " + std::string(format)),
              std::string::npos)
        << plan.error().message;
  }
}

TEST_F(StatsWatchTest, PrometheusFormatAsksStatsAndStatus) {
  client_.stats_sequence = nullptr;
  client_.stats_result = Reading(12345);
  memprof::v1::StatusResponse status;
  status.set_profiling_active(true);
  client_.status_result = status;
  ASSERT_TRUE(RunStats(Options("prometheus", ""), discovery_, client_, out_));
  const std::string text = out_.str();
  EXPECT_NE(text.find(R"(memprof_jemalloc_allocated_bytes{pid="42",command="demo",allocator="jemalloc"} 12345)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(memprof_profiling_active{pid="42",command="demo",allocator="jemalloc"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(memprof_up{pid="42",command="demo"} 1)"), std::string::npos) << text;
}

TEST_F(StatsWatchTest, PrometheusFormatOfAnUnreachableTargetIsAnError) {
  client_.stats_sequence = nullptr;
  client_.stats_result = Fail(ErrorCode::kUnavailable, "stale socket");
  auto result = RunStats(Options("prometheus", ""), discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(out_.str(), "");
}

}  // namespace
}  // namespace memprof::cli
