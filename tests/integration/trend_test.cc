// `memprofctl report --trend` on a real series: trend_target holds a big,
// stable cache (TrendTargetFillCache) and leaks slowly and steadily
// (TrendTargetLeakSlowly). `dump --every` takes the series; the leak must
// rank first in the trend, while the cache tops a plain report of the last
// dump. The fixture stops the target and removes its directory, also when an
// assertion fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

constexpr const char* kTrendTarget = MEMPROF_IT_TREND_TARGET;
constexpr int kDumps = 4;

class TrendTest : public IntegrationTest {
 protected:
  // Every 64 KiB leak is sampled (period 4 KiB), so the series is steady.
  // Profiling is active from the start so that the cache, filled before the
  // readiness handshake, is in the profile.
  TargetProcess* StartTrendTarget() {
    TargetOptions options;
    options.argv = {kTrendTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", "prof:true,prof_active:true,lg_prof_sample:12"}};
    return Start(options);
  }

  // The .heap files `dump --out-dir` wrote, sorted by name (= by time).
  std::vector<std::string> HeapFiles(const std::string& out_dir) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(out_dir)) {
      if (entry.path().extension() == ".heap") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
  }
};

TEST_F(TrendTest, SteadyLeakRanksFirstAndStableCacheTopsTheLastDump) {
  TargetProcess* target = StartTrendTarget();
  ASSERT_NE(target, nullptr);
  CommandResult activated = CliFor(*target, "activate");
  ASSERT_EQ(activated.exit_code, 0) << activated;
  const std::string out_dir = dir().File("series");
  std::filesystem::create_directory(out_dir);
  // 2 s apart: the names carry whole seconds, and --trend orders by them.
  CommandResult series = CliFor(*target, "dump", {"--every", "2s", "--count",
                                                  std::to_string(kDumps), "--out-dir", out_dir});
  ASSERT_EQ(series.exit_code, 0) << series;
  std::vector<std::string> files = HeapFiles(out_dir);
  ASSERT_EQ(files.size(), static_cast<size_t>(kDumps));

  std::vector<std::string> trend_args = {"report", "--trend", "--format", "json"};
  trend_args.insert(trend_args.end(), files.begin(), files.end());
  CommandResult trend = Cli(trend_args);
  ASSERT_EQ(trend.exit_code, 0) << trend;
  const nlohmann::json ranked = nlohmann::json::parse(trend.out);
  ASSERT_FALSE(ranked["call_sites"].empty()) << trend.out;
  EXPECT_EQ(ranked["call_sites"][0]["function"], "TrendTargetLeakSlowly") << trend.out;
  EXPECT_EQ(ranked["call_sites"][0]["verdict"], "steady_growth") << trend.out;
  EXPECT_GT(ranked["call_sites"][0]["growth_per_hour"].get<double>(), 0) << trend.out;

  CommandResult last = Cli({"report", "--format", "json", files.back()});
  ASSERT_EQ(last.exit_code, 0) << last;
  const nlohmann::json report = nlohmann::json::parse(last.out);
  ASSERT_FALSE(report["functions"].empty()) << last.out;
  EXPECT_EQ(report["functions"][0]["name"], "TrendTargetFillCache") << last.out;

  // The text table says the same, and two dumps are a usage error.
  CommandResult text = Cli({"report", "--trend", files[0], files[1], files[2]});
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_NE(text.out.find("steady growth  TrendTargetLeakSlowly"), std::string::npos) << text.out;
  CommandResult too_few = Cli({"report", "--trend", files[0], files[1]});
  EXPECT_EQ(too_few.exit_code, 2) << too_few;
  EXPECT_NE(too_few.err.find("--trend needs at least 3 dumps to fit a line, got 2"),
            std::string::npos)
      << too_few;
  EXPECT_TRUE(too_few.out.empty());
}

}  // namespace
}  // namespace memprof::integration
