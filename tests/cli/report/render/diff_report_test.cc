// --base in the other formats: signed collapsed stacks, json with both
// sides, and the text table as before, on the shared fake-symbolized diff.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/render/collapsed_report.h"
#include "cli/report/render/json_report.h"
#include "cli/report/render/text_report.h"
#include "tests/cli/report/aggregate/fake_symbolizer.h"
#include "tests/cli/report/render/render_util.h"

namespace memprof::report::render {
namespace {

using aggregate::testing::FakeSymbolizer;
using testing::Render;
using aggregate::testing::AggregateDiff;

const nlohmann::json* FindFunction(const nlohmann::json& json, const std::string& name) {
  for (const auto& function : json["functions"]) {
    if (function["name"] == name) return &function;
  }
  return nullptr;
}

// What difffolded-style consumers read: one signed count per stack, as
// `jeprof --collapsed --base` prints them (unchanged stacks as 0).
TEST(DiffCollapsedTest, SignedCounts) {
  EXPECT_EQ(Render(CollapsedReportRenderer(), AggregateDiff()),
            "main;Caller(int);Helper<int>(int)[inline];Leaf(int) 500\n"
            "main;Recursive(int);Recursive(int);Leaf(int) 0\n"
            "main;Leaf(int) 300\n"
            "main;Caller(int);Helper<int>(int)[inline] -500\n"
            "0x8ff -100\n");
}

TEST(DiffJsonTest, SignedValuesAndBothSides) {
  auto json = nlohmann::json::parse(Render(JsonReportRenderer({}), AggregateDiff()));
  EXPECT_EQ(json["diff"], true);
  EXPECT_EQ(json["total"], 200.0);
  EXPECT_EQ(json["total_now"], 2050.0);
  EXPECT_EQ(json["total_base"], 1850.0);
  ASSERT_EQ(json["stacks"].size(), 5u);
  EXPECT_EQ(json["stacks"][0]["value"], 500.0);
  EXPECT_EQ(json["stacks"][0]["now"], 1500.0);
  EXPECT_EQ(json["stacks"][0]["base"], 1000.0);
  EXPECT_EQ(json["stacks"][3]["value"], -500.0);
  EXPECT_EQ(json["stacks"][3]["now"], 0.0);
  EXPECT_EQ(json["stacks"][3]["base"], 500.0);
  const nlohmann::json* helper = FindFunction(json, "Helper (inline)");
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ((*helper)["flat"], -500.0);
  EXPECT_EQ((*helper)["flat_now"], 0.0);
  EXPECT_EQ((*helper)["flat_base"], 500.0);
  EXPECT_EQ((*helper)["cum"], 0.0);
  EXPECT_EQ((*helper)["cum_now"], 1500.0);
  EXPECT_EQ((*helper)["cum_base"], 1500.0);
  const nlohmann::json* leaf = FindFunction(json, "Leaf");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ((*leaf)["flat"], 800.0);
  EXPECT_EQ((*leaf)["flat_now"], 2050.0);
  // A stack's locations are indexes into "locations", as in a plain report.
  EXPECT_EQ(json["stacks"][0]["locations"].size(), 3u);
  EXPECT_EQ(json["locations"][json["stacks"][0]["locations"][0].get<size_t>()]["frames"][0]
                ["function"],
            "Leaf(int)");
}

TEST(DiffJsonTest, AnOrdinaryReportHasNoDiffKeys) {
  FakeSymbolizer symbolizer;
  auto aggregation =
      aggregate::AggregateProfile(aggregate::testing::SharedProfile(), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  std::string text = Render(JsonReportRenderer({}), *aggregation);
  for (const char* key : {"\"diff\"", "total_now", "flat_base", "\"now\"", "\"base\""}) {
    EXPECT_EQ(text.find(key), std::string::npos) << key;
  }
}

// Unchanged functions (Caller nets 0, the recursion did not move) are not
// rows, as in jeprof --base; rows rank by the size of their change, so
// what shrank most (Helper) ranks above what changed less in either way.
TEST(DiffTextTest, SignedRowsRankedByTheSizeOfTheirChange) {
  ReportOptions options;
  options.show_bytes = true;
  EXPECT_EQ(Render(TextReportRenderer(options), AggregateDiff()),
            "Total: 200 B\n"
            "    flat  flat%   sum%      cum   cum% function\n"
            "     800 400.0% 400.0%      800 400.0% Leaf\n"
            "    -500 -250.0% 150.0%        0   0.0% Helper (inline)\n"
            "    -100 -50.0% 100.0%     -100 -50.0% 0x8ff\n"
            "       0   0.0% 100.0%      300 150.0% main\n");
  options.sort_by_cum = true;
  const std::string by_cum = Render(TextReportRenderer(options), AggregateDiff());
  EXPECT_LT(by_cum.find("main"), by_cum.find("0x8ff")) << by_cum;  // |300| > |-100|
  EXPECT_LT(by_cum.find("0x8ff"), by_cum.find("Helper")) << by_cum;
}

}  // namespace
}  // namespace memprof::report::render
