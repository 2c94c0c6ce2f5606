// memprofctl stats: JSON for scripts, a short table for people, raw text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "tests/integration/harness/integration_fixture.h"

namespace memprof::integration {
namespace {

using nlohmann::json;

class StatsTest : public ShapeTest {};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

TEST_P(StatsTest, JsonHasSummaryAndTheFullJemallocObject) {
  CommandResult r = CliFor(target(), "stats", {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json j = ParseJsonOutput(r);
  EXPECT_EQ(j["pid"], target().pid());
  EXPECT_EQ(j["allocator"], "jemalloc");
  for (const char* key : {"allocated", "active", "metadata", "resident", "mapped", "retained",
                          "rss_bytes"}) {
    EXPECT_TRUE(j.contains(key) && j[key].is_number_integer()) << key << "\n" << j.dump(2);
  }
  EXPECT_GT(j["allocated"].get<int64_t>(), 4 << 20) << "the target keeps 4 MiB live";
  EXPECT_GE(j["active"].get<int64_t>(), j["allocated"].get<int64_t>());
  EXPECT_GE(j["resident"].get<int64_t>(), j["active"].get<int64_t>());
  EXPECT_GE(j["mapped"].get<int64_t>(), j["active"].get<int64_t>());
  EXPECT_GT(j["metadata"].get<int64_t>(), 0);
  EXPECT_GT(j["rss_bytes"].get<int64_t>(), 0);
  ASSERT_TRUE(j.contains("fragmentation_ratio") && j["fragmentation_ratio"].is_number()) << j.dump(2);
  double frag = j["fragmentation_ratio"].get<double>();
  EXPECT_GE(frag, 0.0);
  EXPECT_LT(frag, 1.0);

  // malloc_stats_print's JSON, parsed and re-embedded (either the whole
  // document {"jemalloc": {...}} or its inner object).
  ASSERT_TRUE(j.contains("jemalloc") && j["jemalloc"].is_object()) << r;
  const json& je = j["jemalloc"].contains("jemalloc") ? j["jemalloc"]["jemalloc"] : j["jemalloc"];
  EXPECT_TRUE(je.contains("version")) << je.dump().substr(0, 500);
  ASSERT_TRUE(je.contains("stats") && je["stats"].contains("allocated")) << je.dump().substr(0, 500);
  EXPECT_GT(je["stats"]["allocated"].get<int64_t>(), 0);
  EXPECT_EQ(je["opt"]["prof"], true);
}

TEST_P(StatsTest, DefaultTableHasTheRows) {
  CommandResult r = CliFor(target(), "stats");
  ASSERT_EQ(r.exit_code, 0) << r;
  std::string out = Lower(r.out);
  for (const char* row :
       {"allocated", "active", "resident", "mapped", "retained", "metadata", "rss", "fragmentation"}) {
    EXPECT_NE(out.find(row), std::string::npos) << row << "\n" << r;
  }
  EXPECT_NE(r.out.find("MiB"), std::string::npos) << "human sizes expected\n" << r;
  EXPECT_NE(r.out.find('%'), std::string::npos) << "fragmentation as a percentage\n" << r;
  EXPECT_LT(std::count(r.out.begin(), r.out.end(), '\n'), 30) << "a short table\n" << r;
}

TEST_P(StatsTest, RawIsJemallocsOwnReport) {
  CommandResult r = CliFor(target(), "stats", {"--raw"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(r.out.find("Begin jemalloc statistics"), std::string::npos) << r;
  EXPECT_NE(r.out.find("End jemalloc statistics"), std::string::npos) << "truncated";
}

TEST_P(StatsTest, JsonAndRawAreExclusive) {
  CommandResult r = CliFor(target(), "stats", {"--json", "--raw"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
}

INSTANTIATE_TEST_SUITE_P(AllShapes, StatsTest,
                         ::testing::Values(Shape::kLinked, Shape::kPreloaded, Shape::kRunPlain,
                                           Shape::kRunGlibc),
                         ShapeName);

}  // namespace
}  // namespace memprof::integration
