// --trend: the line fit, the verdicts, the ranking (a slow leak above a big
// stable cache), dump times, and the pipeline with too few dumps.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/report/report_pipeline.h"
#include "cli/report/trend/dump_time.h"
#include "cli/report/trend/trend.h"

namespace memprof::report::trend {
namespace {

constexpr double kMiB = 1024 * 1024;

Snapshot At(double seconds, std::vector<aggregate::FunctionRow> rows) {
  return Snapshot{seconds, std::move(rows)};
}

aggregate::FunctionRow Row(const std::string& name, double flat) { return {name, flat, flat}; }

TEST(FitLineTest, ExactLine) {
  const LineFit fit = FitLine({0, 1, 2, 3}, {10, 12, 14, 16});
  EXPECT_DOUBLE_EQ(fit.slope, 2);
  EXPECT_DOUBLE_EQ(fit.r_squared, 1);
}

TEST(FitLineTest, ConstantSeriesHasNothingToExplain) {
  const LineFit fit = FitLine({0, 1, 2}, {5, 5, 5});
  EXPECT_EQ(fit.slope, 0);
  EXPECT_EQ(fit.r_squared, 0);
}

TEST(FitLineTest, AllAtOneTimeGivesNoSlope) {
  const LineFit fit = FitLine({1, 1, 1}, {1, 2, 3});
  EXPECT_EQ(fit.slope, 0);
}

TEST(ClassifyTest, Verdicts) {
  auto classify = [](std::vector<double> values) {
    std::vector<double> xs;
    for (size_t i = 0; i < values.size(); ++i) xs.push_back(static_cast<double>(i));
    return Classify(values, FitLine(xs, values));
  };
  EXPECT_EQ(classify({1, 2, 3, 4, 5}), Verdict::kSteadyGrowth);
  EXPECT_EQ(classify({1, 2.2, 2.9, 4.1, 5}), Verdict::kSteadyGrowth);
  EXPECT_EQ(classify({1, 1, 9, 9, 9}), Verdict::kStep);
  EXPECT_EQ(classify({9, 9, 1, 1, 1}), Verdict::kStep);  // a step down too
  EXPECT_EQ(classify({5, 5, 5, 5}), Verdict::kNoise);
  EXPECT_EQ(classify({5, 6, 5, 6, 5}), Verdict::kNoise);
  EXPECT_EQ(classify({5, 4, 3, 2, 1}), Verdict::kNoise);  // shrinking is no leak
  // Three dumps: two equal rises are steady; one rise twice the other a step.
  EXPECT_EQ(classify({0, 1, 2}), Verdict::kSteadyGrowth);
  EXPECT_EQ(classify({0, 1, 3}), Verdict::kStep);
}

TEST(ComputeTrendTest, SlowLeakRanksAboveBigStableCache) {
  std::vector<Snapshot> snapshots;
  for (int i = 0; i < 6; ++i) {
    snapshots.push_back(At(1000 + 600.0 * i, {Row("fill_cache", 512 * kMiB),
                                              Row("leak_slowly", (1 + i) * kMiB),
                                              Row("warm_up", i < 3 ? 0 : 64 * kMiB)}));
  }
  auto rows = ComputeTrend(snapshots);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].function, "leak_slowly");
  EXPECT_EQ((*rows)[0].verdict, Verdict::kSteadyGrowth);
  EXPECT_NEAR((*rows)[0].growth_per_hour, 6 * kMiB, 1);  // 1 MiB per 10 minutes
  EXPECT_NEAR((*rows)[0].r_squared, 1, 1e-12);
  EXPECT_EQ((*rows)[0].first, kMiB);
  EXPECT_EQ((*rows)[0].last, 6 * kMiB);
  EXPECT_EQ((*rows)[1].function, "warm_up");
  EXPECT_EQ((*rows)[1].verdict, Verdict::kStep);
  EXPECT_EQ((*rows)[2].function, "fill_cache");
  EXPECT_EQ((*rows)[2].verdict, Verdict::kNoise);
}

TEST(ComputeTrendTest, FunctionMissingFromADumpCountsAsZero) {
  auto rows = ComputeTrend({At(0, {Row("a", 1)}), At(60, {}), At(120, {Row("a", 1)})});
  ASSERT_TRUE(rows);
  EXPECT_EQ((*rows)[0].values, (std::vector<double>{1, 0, 1}));
}

TEST(ComputeTrendTest, TooFewDumpsIsAUsageError) {
  auto rows = ComputeTrend({At(0, {}), At(60, {})});
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(rows.error().message, "--trend needs at least 3 dumps to fit a line, got 2");
}

TEST(ComputeTrendTest, DumpsAllAtOneTimeAreAUsageError) {
  auto rows = ComputeTrend({At(5, {}), At(5, {}), At(5, {})});
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().code, ErrorCode::kInvalidArgument);
}

TEST(DumpTimeTest, TimeFromOutDirNames) {
  EXPECT_EQ(TimeFromDumpFileName("/x/web1-1234-19700101T000130Z.heap"), 90.0);
  EXPECT_EQ(TimeFromDumpFileName("web1-1234-19700101T000130Z-2.heap"), 90.0);
  EXPECT_EQ(TimeFromDumpFileName("web1-1234-20261122T211530Z.heap"), 1795382130.0);
  EXPECT_FALSE(TimeFromDumpFileName("profile.heap"));
  EXPECT_FALSE(TimeFromDumpFileName("web1-1234-20261322T211530Z.heap"));  // month 13
  EXPECT_FALSE(TimeFromDumpFileName("dir-19700101T000130Z/profile.heap"));
}

TEST(DumpTimeTest, FallsBackToTheMtime) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("memprof-trend-mtime-" + std::to_string(::getpid()) + ".heap");
  std::ofstream(path) << "x";
  auto time = ReadDumpTime(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(time);
  EXPECT_EQ(time->source, DumpTime::Source::kModified);
  EXPECT_GT(time->seconds, 1.7e9);
}

// The pipeline over files named the way `dump --every --out-dir` names them.
class TrendPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("memprof-trend-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Two stacks: a cache (constant) at 0x...0100, a leak growing at 0x...0300.
  std::string Write(int minute, const std::string& base_hex, int leak_bytes) {
    char name[64];
    std::snprintf(name, sizeof(name), "web1-1-20261125T05%02d00Z.heap", minute);
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    out << "heap_v2/0\n  t*: 2: " << 1000000 + leak_bytes << " [0: 0]\n"
        << "@ 0x" << base_hex << "0100\n  t*: 1: 1000000 [0: 0]\n"
        << "@ 0x" << base_hex << "0300\n  t*: 1: " << leak_bytes << " [0: 0]\n"
        << "\nMAPPED_LIBRARIES:\n"
        << base_hex << "0000-" << base_hex << "9000 r-xp 00000000 08:02 17 /opt/server\n";
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(TrendPipelineTest, JsonRanksTheLeakFirstWhateverTheArgumentOrder) {
  report::ReportRequest request;
  request.trend = true;
  request.format = report::Format::kJson;
  // Given out of order and from processes with different load addresses.
  request.dump_path = Write(20, "56330000", 3000);
  request.more_dump_paths = {Write(0, "55550000", 1000), Write(10, "57770000", 2000)};
  std::ostringstream out;
  auto result = report::RunReportPipeline(request, out);
  ASSERT_TRUE(result) << result.error().message;
  const nlohmann::json json = nlohmann::json::parse(out.str());
  ASSERT_EQ(json["dumps"].size(), 3u);
  EXPECT_EQ(json["dumps"][0]["time_source"], "file name");
  EXPECT_NE(json["dumps"][0]["path"].get<std::string>().find("T050000Z"), std::string::npos);
  ASSERT_EQ(json["call_sites"].size(), 2u);
  const nlohmann::json& top = json["call_sites"][0];
  EXPECT_EQ(top["verdict"], "steady_growth");
  EXPECT_EQ(top["values"], nlohmann::json({1000.0, 2000.0, 3000.0}));
  EXPECT_DOUBLE_EQ(top["growth_per_hour"].get<double>(), 6000);
  EXPECT_EQ(json["call_sites"][1]["verdict"], "noise");
  EXPECT_EQ(json["call_sites"][1]["first"], 1000000.0);
}

TEST_F(TrendPipelineTest, TextTable) {
  report::ReportRequest request;
  request.trend = true;
  request.show_bytes = true;
  request.dump_path = Write(0, "55550000", 1000);
  request.more_dump_paths = {Write(10, "55550000", 2000), Write(20, "55550000", 3000)};
  std::ostringstream out;
  ASSERT_TRUE(report::RunReportPipeline(request, out));
  EXPECT_EQ(out.str(),
            "Trend over 3 dumps, 2026-11-25 05:00:00 .. 2026-11-25 05:20:00 UTC (20.0 min), "
            "inuse_space in B\n"
            "  growth/h    R2     first      last  verdict        function\n"
            "      6000  1.00      1000      3000  steady growth  server+0x300\n"
            "         0  0.00   1000000   1000000  noise          server+0x100\n");
}

TEST_F(TrendPipelineTest, UsageErrors) {
  report::ReportRequest request;
  request.trend = true;
  request.dump_path = Write(0, "55550000", 1000);
  request.more_dump_paths = {Write(10, "55550000", 2000)};
  std::ostringstream out;
  auto result = report::RunReportPipeline(request, out);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().message, "--trend needs at least 3 dumps to fit a line, got 2");
  request.more_dump_paths.push_back(Write(20, "55550000", 3000));
  request.format = report::Format::kSvg;
  result = report::RunReportPipeline(request, out);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "--trend writes text or json, not 'svg'");
  request.format = report::Format::kPprof;
  result = report::RunReportPipeline(request, out);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "--trend writes text or json, not 'pprof'");
  request.format = report::Format::kText;
  request.base_path = request.dump_path;
  result = report::RunReportPipeline(request, out);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "--trend cannot be combined with --base");
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace memprof::report::trend
