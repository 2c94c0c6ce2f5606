#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/render/collapsed_report.h"
#include "cli/report/render/json_report.h"
#include "cli/report/render/report_format.h"
#include "cli/report/render/svg_report.h"
#include "cli/report/render/text_report.h"
#include "cli/report/symbolize/demangle.h"
#include "tests/cli/report/aggregate/fake_symbolizer.h"
#include "tests/cli/report/render/render_util.h"

namespace memprof::report::render {
namespace {

using aggregate::testing::FakeSymbolizer;
using testing::Render;
using aggregate::testing::SharedProfile;

aggregate::Aggregation Aggregate(Metric metric = Metric::kInuseSpace) {
  FakeSymbolizer symbolizer;
  aggregate::AggregateOptions options;
  options.metric = metric;
  auto aggregation = aggregate::AggregateProfile(SharedProfile(), symbolizer, options);
  EXPECT_TRUE(aggregation.has_value());
  return aggregation.value_or(aggregate::Aggregation{});
}

// --lines names every frame "function file:line" in every format, not only
// in json's frames: text rows are then per line of code, as in jeprof.
TEST(LinesTest, EveryFormatNamesFramesWithFileAndLine) {
  FakeSymbolizer symbolizer;
  aggregate::AggregateOptions options;
  options.lines = true;
  auto lines = aggregate::AggregateProfile(SharedProfile(), symbolizer, options);
  ASSERT_TRUE(lines.has_value());
  ReportOptions report;
  report.show_bytes = true;
  const std::string text = Render(TextReportRenderer(report), *lines);
  EXPECT_NE(text.find("    1250  67.6%  67.6%     1250  67.6% Leaf leaf.cc:12\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Helper (inline) helper.h:5\n"), std::string::npos) << text;
  const std::string collapsed = Render(CollapsedReportRenderer(), *lines);
  EXPECT_NE(collapsed.find("main main.cc:3;Caller(int) caller.cc:40;Helper<int>(int)[inline] "
                           "helper.h:5"),
            std::string::npos)
      << collapsed;
  const std::string svg = Render(SvgReportRenderer(), *lines);
  EXPECT_NE(svg.find("<title>Leaf(int) leaf.cc:12&#10;"), std::string::npos);
  const aggregate::Aggregation plain = Aggregate();
  EXPECT_EQ(Render(TextReportRenderer(report), plain).find("leaf.cc"), std::string::npos);
  EXPECT_EQ(Render(CollapsedReportRenderer(), plain).find("leaf.cc"), std::string::npos);
  EXPECT_EQ(Render(SvgReportRenderer(), plain).find("leaf.cc:12"), std::string::npos);
}

TEST(ReportFormatTest, JeprofUnparseAndPercent) {
  EXPECT_EQ(FormatValue(1048576 * 12.25, Metric::kInuseSpace, false), "12.2");  // half-even
  EXPECT_EQ(FormatValue(1048576 * 12.35, Metric::kInuseSpace, false), "12.3");  // binary value
  EXPECT_EQ(FormatValue(52428.8, Metric::kInuseSpace, false), "0.1");
  EXPECT_EQ(FormatValue(-1.0, Metric::kInuseSpace, false), "-0.0");
  EXPECT_EQ(FormatValue(1234.99, Metric::kInuseSpace, true), "1234");  // %d truncates
  EXPECT_EQ(FormatValue(-7.9, Metric::kInuseObjects, false), "-7");
  EXPECT_EQ(FormatValue(1e20, Metric::kInuseObjects, false), "-1");  // Perl's UV wrap
  EXPECT_EQ(UnitName(Metric::kInuseSpace, false), "MiB");
  EXPECT_EQ(UnitName(Metric::kAllocSpace, true), "B");
  EXPECT_EQ(UnitName(Metric::kAllocObjects, false), "objects");
  EXPECT_EQ(FormatPercent(1, 3), "33.3%");
  EXPECT_EQ(FormatPercent(0, 0), "nan");
  EXPECT_EQ(FormatPercent(-2, 0), "-inf");
  EXPECT_EQ(FormatPercent(2, 0), "+inf");
}

TEST(TextReportTest, LikeJeprofText) {
  ReportOptions options;
  options.show_bytes = true;
  EXPECT_EQ(Render(TextReportRenderer(options), Aggregate()),
            "Total: 1900 B\n"
            "    flat  flat%   sum%      cum   cum% function\n"
            "    1250  67.6%  67.6%     1250  67.6% Leaf\n"
            "     500  27.0%  94.6%     1500  81.1% Helper (inline)\n"
            "     100   5.4% 100.0%      100   5.4% 0x8ff\n"
            "       0   0.0% 100.0%     1500  81.1% Caller\n"
            "       0   0.0% 100.0%      250  13.5% Recursive\n"
            "       0   0.0% 100.0%     1750  94.6% main\n");
}

TEST(TextReportTest, MegabytesTopAndCum) {
  ReportOptions options;
  options.top = 2;
  options.sort_by_cum = true;
  EXPECT_EQ(Render(TextReportRenderer(options), Aggregate()),
            "Total: 0.0 MiB\n"
            "    flat  flat%   sum%      cum   cum% function\n"
            "     0.0   0.0%   0.0%      0.0  94.6% main\n"
            "     0.0   0.0%   0.0%      0.0  81.1% Caller\n");
}

TEST(TextReportTest, Objects) {
  EXPECT_EQ(Render(TextReportRenderer({}), Aggregate(Metric::kInuseObjects)).substr(0, 110),
            "Total: 19 objects\n"
            "    flat  flat%   sum%      cum   cum% function\n"
            "      12  66.7%  66.7%       12  66.7% Leaf\n");
}

// The demo's ServeRequests lives in an anonymous namespace: named as the
// symbolizer names it (the demangled ELF symbol), its row keeps that
// namespace instead of reading "demo::::ServeRequests".
TEST(TextReportTest, KeepsTheAnonymousNamespaceOfADemangledName) {
  const std::string name = symbolize::Demangle("_ZN4demo12_GLOBAL__N_113ServeRequestsEv");
  ASSERT_EQ(name, "demo::(anonymous namespace)::ServeRequests()");
  FakeSymbolizer symbolizer;
  symbolizer.Add(0x3, {{name, "demo_service.cc", 12, "memprof-demo", 0x300}});
  auto aggregation = aggregate::AggregateProfile(SharedProfile(), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  ReportOptions options;
  options.show_bytes = true;
  const std::string text = Render(TextReportRenderer(options), *aggregation);
  EXPECT_NE(text.find("    1250  67.6%  67.6%     1250  67.6% "
                      "demo::(anonymous namespace)::ServeRequests\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("demo::::"), std::string::npos) << text;
}

TEST(TextReportTest, EmptyProfilePrintsNothing) {
  EXPECT_EQ(Render(TextReportRenderer({}), aggregate::Aggregation{}), "");
}

TEST(TextReportTest, WriteFailureIsAnError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  auto ok = TextReportRenderer({}).Render(Aggregate(), out);
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().message, "writing the report failed");
}

TEST(CollapsedReportTest, RootFirstFoldedStacks) {
  EXPECT_EQ(Render(CollapsedReportRenderer(), Aggregate()),
            "main;Caller(int);Helper<int>(int)[inline];Leaf(int) 1000\n"
            "main;Caller(int);Helper<int>(int)[inline] 500\n"
            "main;Recursive(int);Recursive(int);Leaf(int) 250\n"
            "0x8ff 100\n");
}

// The frames of one "stacks" entry, each with its location's address:
// what the document's "locations" table says of each index.
std::vector<nlohmann::json> FramesOf(const nlohmann::json& report, const nlohmann::json& stack) {
  std::vector<nlohmann::json> frames;
  for (const auto& index : stack["locations"]) {
    const nlohmann::json& location = report["locations"][index.get<size_t>()];
    for (nlohmann::json frame : location["frames"]) {
      frame["address"] = location["address"];
      frames.push_back(std::move(frame));
    }
  }
  return frames;
}

TEST(JsonReportTest, TotalsFunctionsAndStacks) {
  ReportOptions options;
  options.top = 3;
  auto json = nlohmann::json::parse(Render(JsonReportRenderer(options), Aggregate()));
  EXPECT_EQ(json["metric"], "inuse_space");
  EXPECT_EQ(json["unit"], "bytes");
  EXPECT_EQ(json["total"], 1900.0);
  EXPECT_EQ(json["shown_total"], 1850.0);
  ASSERT_EQ(json["functions"].size(), 3u);
  EXPECT_EQ(json["functions"][1]["name"], "Helper (inline)");
  EXPECT_EQ(json["functions"][1]["cum"], 1500.0);
  ASSERT_EQ(json["stacks"].size(), 5u);
  const auto frames = FramesOf(json, json["stacks"][0]);
  ASSERT_EQ(frames.size(), 4u);  // Leaf, Helper (inlined), Caller, main
  EXPECT_EQ(frames[0]["function"], "Leaf(int)");
  EXPECT_EQ(frames[0]["file"], "leaf.cc");
  EXPECT_EQ(frames[0]["line"], 12);
  EXPECT_EQ(frames[1]["inlined"], true);
  EXPECT_EQ(frames[1]["address"], "0x40f");
  EXPECT_EQ(frames[2]["function"], "Caller(int)");
  EXPECT_EQ(frames[2]["inlined"], false);
  EXPECT_EQ(frames[3]["module"], "app");
  EXPECT_EQ(FramesOf(json, json["stacks"][3])[0]["function"], "0x8ff");
}

// Each location is written once, however many stacks hold it; a stack is
// its value and the indexes of its locations, leaf first.
TEST(JsonReportTest, StacksShareTheirLocations) {
  const aggregate::Aggregation aggregation = Aggregate();
  auto json = nlohmann::json::parse(Render(JsonReportRenderer({}), aggregation));
  ASSERT_EQ(json["locations"].size(), aggregation.locations.size());
  for (size_t s = 0; s < aggregation.stacks.size(); ++s) {
    EXPECT_EQ(json["stacks"][s]["locations"].get<std::vector<uint32_t>>(),
              aggregation.stacks[s].locations);
    EXPECT_EQ(json["stacks"][s]["value"], aggregation.stacks[s].value);
  }
}

// A profile with many stacks is written by two threads (the second half
// formatted on the side): every stack once, in order, one line each, with
// the same bytes as when the profile is small enough for one.
TEST(JsonReportTest, ManyStacksComeOutInOrderOneLineEach) {
  aggregate::Aggregation aggregation = Aggregate();
  const std::vector<aggregate::StackSample> few = aggregation.stacks;
  aggregation.stacks.clear();
  for (size_t i = 0; i < 10001; ++i) {
    aggregate::StackSample stack = few[i % few.size()];
    stack.value = 0.5 + static_cast<double>(i);
    aggregation.stacks.push_back(stack);
  }
  const std::string text = Render(JsonReportRenderer({}), aggregation);
  auto json = nlohmann::json::parse(text);
  ASSERT_EQ(json["stacks"].size(), aggregation.stacks.size());
  for (size_t s = 0; s < aggregation.stacks.size(); ++s) {
    ASSERT_EQ(json["stacks"][s]["value"], aggregation.stacks[s].value) << s;
    ASSERT_EQ(json["stacks"][s]["locations"].get<std::vector<uint32_t>>(),
              aggregation.stacks[s].locations);
  }
  const std::string stack_lines = text.substr(text.find("\n  \"stacks\": [\n"));
  EXPECT_EQ(std::count(stack_lines.begin(), stack_lines.end(), '\n'),
            static_cast<long>(aggregation.stacks.size()) + 4);
  // Its first stacks' lines are those of a small report's.
  aggregate::Aggregation small = aggregation;
  small.stacks.resize(few.size());
  const std::string small_text = Render(JsonReportRenderer({}), small);
  const std::string small_head = small_text.substr(0, small_text.rfind("\n  ]"));
  EXPECT_EQ(text.substr(0, small_head.size()), small_head);
}

// One line per location and per stack (the big arrays stay greppable and
// streamable), valid JSON also for a stack the allocator cut emptied and a
// report without stacks.
TEST(JsonReportTest, OneLinePerLocationAndStack) {
  const aggregate::Aggregation aggregation = Aggregate();
  const std::string text = Render(JsonReportRenderer({}), aggregation);
  const size_t locations = text.find("\n  \"locations\": [\n");
  const size_t stacks = text.find("\n  \"stacks\": [\n");
  ASSERT_NE(locations, std::string::npos) << text;
  ASSERT_NE(stacks, std::string::npos) << text;
  const std::string stack_lines = text.substr(stacks);
  EXPECT_EQ(std::count(stack_lines.begin(), stack_lines.end(), '\n'),
            static_cast<long>(aggregation.stacks.size()) + 4)
      << stack_lines;
  for (const aggregate::Aggregation& each : {Aggregate(), aggregate::Aggregation{}}) {
    EXPECT_TRUE(nlohmann::json::accept(Render(JsonReportRenderer({}), each)));
  }
  EXPECT_EQ(
      nlohmann::json::parse(Render(JsonReportRenderer({}), aggregate::Aggregation{}))["stacks"]
          .size(),
      0u);
}

TEST(JsonReportTest, InvalidUtf8InNamesDoesNotThrow) {
  HeapProfile profile;
  profile.samples.push_back({{0xa10}, {1, 64}, {}});
  FakeSymbolizer symbolizer;
  symbolizer.Add(0xa, {{"bad\xff name", "", 0, "", 0}});
  auto aggregation = aggregate::AggregateProfile(profile, symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  auto json = nlohmann::json::parse(Render(JsonReportRenderer({}), *aggregation));
  EXPECT_EQ(json["functions"][0]["name"], "bad\xEF\xBF\xBD name");
}

}  // namespace
}  // namespace memprof::report::render
