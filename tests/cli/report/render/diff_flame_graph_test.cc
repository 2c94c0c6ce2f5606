// The differential flame graph (--base with svg): widths that count growth
// and shrinkage, colours by the sign of the change, the legend and the
// tooltips, on the shared fake-symbolized diff.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/render/diff_svg.h"
#include "cli/report/render/flame_colors.h"
#include "cli/report/render/flame_graph.h"
#include "cli/report/render/flame_layout.h"
#include "cli/report/render/svg_report.h"
#include "cli/report/render/xml_text.h"
#include "tests/cli/report/aggregate/fake_symbolizer.h"
#include "tests/cli/report/render/xml_check.h"

namespace memprof::report::render {
namespace {

using aggregate::testing::FakeSymbolizer;
using aggregate::testing::AggregateDiff;
using aggregate::testing::SharedDiffProfile;

std::string RenderDiffSvg(const aggregate::Aggregation& aggregation) {
  std::ostringstream out;
  auto ok = SvgReportRenderer(SvgOptions{"t", 1200, 0.001}).Render(aggregation, out);
  EXPECT_TRUE(ok.has_value());
  return out.str();
}

// "name=width/change/base" per node in pre-order.
std::string DescribeDiff(const FlameGraph& graph, uint32_t node = 0) {
  const FlameNode& n = graph.nodes[node];
  std::string text = graph.name(n) + "=" + std::to_string(static_cast<long>(n.value)) + "/" +
                     std::to_string(static_cast<long>(graph.changes[node].change)) + "/" +
                     std::to_string(static_cast<long>(graph.changes[node].base));
  for (uint32_t child : graph.children(n)) text += " " + DescribeDiff(graph, child);
  return text;
}

struct DiffFrame {
  std::string classes;
  std::string title;
  double width = 0;
  std::string fill;
};

std::vector<DiffFrame> DiffFrames(const std::string& svg) {
  static const std::regex kFrame(
      "<g class=\"f([^\"]*)\"[^>]*><title>([^<]*)</title><rect x=\"[0-9.]+\" y=\"[0-9.]+\" "
      "width=\"([0-9.]+)\"[^>]* fill=\"([^\"]+)\"/>");
  std::vector<DiffFrame> frames;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kFrame); it != std::sregex_iterator();
       ++it) {
    frames.push_back({(*it)[1], (*it)[2], std::stod((*it)[3]), (*it)[4]});
  }
  return frames;
}

int Hue(const std::string& fill) {
  std::smatch match;
  EXPECT_TRUE(std::regex_match(fill, match, std::regex("hsl\\((\\d+),\\d+%,(\\d+)%\\)"))) << fill;
  return match.empty() ? -1 : std::stoi(match[1]);
}

int Lightness(const std::string& fill) {
  std::smatch match;
  std::regex_match(fill, match, std::regex("hsl\\(\\d+,\\d+%,(\\d+)%\\)"));
  return match.empty() ? -1 : std::stoi(match[1]);
}

// The title (centred: too wide, it is clipped at both ends, where the
// dump's name and the net change are) fits the image as laid out: 0.6 em
// per monospace character, at 17px or the size its style says.
TEST(DiffFlameGraphTest, TitleFitsTheWidthAndKeepsTheNetChange) {
  static const std::regex kTitle(
      "<text id=\"title\" x=\"[0-9.]+\" y=\"24\"(?: style=\"font-size:([0-9.]+)px\")?>([^<]*)</text>");
  const aggregate::Aggregation diff = AggregateDiff();
  for (double width : {1200.0, 600.0}) {
    for (const std::string& name : {std::string("memprof: web1-1234.heap"),
                                    "memprof: " + std::string(150, 'x') + ".heap"}) {
      std::ostringstream out;
      ASSERT_TRUE(SvgReportRenderer(SvgOptions{name, width, 0.001}).Render(diff, out).has_value());
      const std::string svg = out.str();
      std::smatch match;
      ASSERT_TRUE(std::regex_search(svg, match, kTitle)) << svg.substr(0, 2000);
      const double px = match[1].matched ? std::stod(match[1]) : 17;
      const std::string text = match[2];
      EXPECT_LE(static_cast<double>(Utf8Length(text)) * px * 0.6, width - 20)
          << width << ": " << text << " at " << px << "px";
      EXPECT_TRUE(text.ends_with("net +200 B")) << text;
      EXPECT_TRUE(text.starts_with("memprof: ")) << text;
    }
  }
}

TEST(DiffFlameGraphTest, WidthIsGrowthPlusShrinkage) {
  FlameGraph graph = BuildFlameGraph(AggregateDiff());
  ASSERT_TRUE(graph.is_diff);
  EXPECT_EQ(graph.negative_stacks, 0u);  // nothing is left out any more
  // Helper loses 500 itself and gains 500 through Leaf: net 0, 1000 wide.
  // Recursion did not change: 0 wide, but its 250 B count in main's base.
  EXPECT_EQ(DescribeDiff(graph),
            "all=1400/200/1850 main=1300/300/1750 Caller(int)=1000/0/1500 "
            "Helper<int>(int)[inline]=1000/0/1500 Leaf(int)=500/500/1000 "
            "Leaf(int)=300/300/0 Recursive(int)=0/0/250 Recursive(int)=0/0/250 "
            "Leaf(int)=0/0/250 0x8ff=100/-100/100");
  EXPECT_EQ(graph.profile_total, 200);
  EXPECT_EQ(graph.base_total, 1850);
}

TEST(DiffFlameGraphTest, LayoutLeavesRoomForShrinkage) {
  FlameGraph graph = BuildFlameGraph(AggregateDiff());
  FlameLayout layout = LayoutFlameGraph(graph, 0.001);
  // all, main, Caller, Helper, Leaf, main's Leaf, 0x8ff; unchanged
  // Recursive (0 wide) is omitted with its callees.
  ASSERT_EQ(layout.rects.size(), 7u);
  const FlameRect& helper = layout.rects[3];
  const FlameRect& leaf = layout.rects[4];
  EXPECT_EQ(helper.value, 1000);
  EXPECT_EQ(leaf.value, 500);  // the other 500 of Helper is its own shrinkage
  EXPECT_EQ(leaf.offset, helper.offset);
  EXPECT_EQ(layout.rects[5].offset, 1000);  // main's Leaf after Caller
  EXPECT_EQ(layout.rects[5].change, 300);
  EXPECT_EQ(layout.rects[6].offset, 1300);  // 0x8ff after main
  EXPECT_EQ(layout.rects[6].change, -100);
  EXPECT_EQ(layout.omitted_frames, 3u);
}

TEST(DiffFlameGraphTest, ColourFamilyBySignIntensityByMagnitude) {
  EXPECT_EQ(FamilyOf(5), ChangeFamily::kGrowth);
  EXPECT_EQ(FamilyOf(-5), ChangeFamily::kShrinkage);
  EXPECT_EQ(FamilyOf(0), ChangeFamily::kNone);
  int last_growth = 101;
  int last_shrinkage = 101;
  for (double share : {0.001, 0.01, 0.1, 0.5, 1.0}) {
    std::string growth = DiffFill(share * 400, 400);
    std::string shrinkage = DiffFill(-share * 400, 400);
    EXPECT_GE(Hue(growth), 0);
    EXPECT_LE(Hue(growth), 40) << growth;         // red .. orange
    EXPECT_GE(Hue(shrinkage), 195) << shrinkage;  // sky .. blue
    EXPECT_LE(Hue(shrinkage), 230) << shrinkage;
    EXPECT_LT(Lightness(growth), last_growth) << "not darker for a larger change";
    EXPECT_LT(Lightness(shrinkage), last_shrinkage);
    last_growth = Lightness(growth);
    last_shrinkage = Lightness(shrinkage);
  }
  EXPECT_GE(last_growth, 45);  // black labels stay readable
  EXPECT_EQ(DiffFill(0, 400), "hsl(0,0%,86%)");
  EXPECT_EQ(DiffFill(1e9, 400), DiffFill(400, 400));  // the root's change saturates
  EXPECT_DOUBLE_EQ(ChangeIntensity(100, 400), 0.5);
}

TEST(DiffSvgTest, FramesAreColouredByTheSignOfTheirChange) {
  std::string svg = RenderDiffSvg(AggregateDiff());
  std::vector<DiffFrame> frames = DiffFrames(svg);
  ASSERT_EQ(frames.size(), 7u);
  EXPECT_NE(svg.find("data-diff=\"1\""), std::string::npos);
  // The largest non-root change is Leaf's +500.
  EXPECT_EQ(frames[1].classes, " grew");
  EXPECT_EQ(frames[1].fill, DiffFill(300, 500));
  EXPECT_EQ(frames[2].classes, " same");  // Caller: net 0
  EXPECT_EQ(frames[2].fill, DiffFill(0, 500));
  EXPECT_EQ(frames[4].classes, " grew");
  EXPECT_LE(Hue(frames[4].fill), 40);
  EXPECT_EQ(frames[6].classes, " shrank");  // 0x8ff, -100
  EXPECT_EQ(frames[6].fill, DiffFill(-100, 500));
  EXPECT_NE(frames[6].fill, frames[1].fill);
  EXPECT_GE(Hue(frames[6].fill), 195);
  // Widths in pixels: 1180 for the 1400 B of change.
  EXPECT_NEAR(frames[3].width, 1180.0 * 1000 / 1400, 0.005);
  EXPECT_NEAR(frames[6].width, 1180.0 * 100 / 1400, 0.005);
}

TEST(DiffSvgTest, TooltipsGiveTheSignedChangeAndBothValues) {
  std::vector<DiffFrame> frames = DiffFrames(RenderDiffSvg(AggregateDiff()));
  ASSERT_EQ(frames.size(), 7u);
  EXPECT_EQ(frames[0].title, "all&#10;+200 B (now 2.0 KiB, base 1.8 KiB)");
  EXPECT_EQ(frames[2].title, "Caller(int)&#10;0 B (now 1.5 KiB, base 1.5 KiB)");
  EXPECT_EQ(frames[4].title, "Leaf(int)&#10;+500 B (now 1.5 KiB, base 1000 B)");
  EXPECT_EQ(frames[5].title, "Leaf(int)&#10;+300 B (now 300 B, base 0 B)");
  EXPECT_EQ(frames[6].title, "0x8ff&#10;-100 B (now 0 B, base 100 B)");
  EXPECT_EQ(DiffDetail(-1.5 * 1048576, 4 * 1048576, Metric::kInuseSpace),
            "-1.5 MiB (now 2.5 MiB, base 4.0 MiB)");
  EXPECT_EQ(SignedHumanValue(1234, Metric::kInuseObjects), "+1,234 objects");
}

TEST(DiffSvgTest, TitleAndLegendSayWhatColoursAndWidthsMean) {
  std::string svg = RenderDiffSvg(AggregateDiff());
  EXPECT_NE(svg.find(">t \xE2\x80\x94 in-use space change (red: grew, blue: shrank), net +200 B<"),
            std::string::npos);
  EXPECT_NE(svg.find("now 2.0 KiB, base 1.8 KiB; 7 frames drawn"), std::string::npos);
  EXPECT_EQ(svg.find("negative stacks not drawn"), std::string::npos);
  size_t legend = svg.find("<g id=\"legend\">");
  ASSERT_NE(legend, std::string::npos);
  std::string row = svg.substr(legend, svg.find("</g>", legend) - legend);
  std::regex swatch("data-family=\"(\\w+)\"[^>]* fill=\"([^\"]+)\"");
  std::vector<std::pair<std::string, std::string>> swatches;
  for (auto it = std::sregex_iterator(row.begin(), row.end(), swatch); it != std::sregex_iterator();
       ++it) {
    swatches.push_back({(*it)[1], (*it)[2]});
  }
  ASSERT_EQ(swatches.size(), 7u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(swatches[i].first, "growth");
    EXPECT_LE(Hue(swatches[i].second), 40);
    EXPECT_EQ(swatches[3 + i].first, "shrinkage");
    EXPECT_GE(Hue(swatches[3 + i].second), 195);
  }
  EXPECT_EQ(swatches[6].first, "none");
  EXPECT_NE(row.find(">grew<"), std::string::npos);
  EXPECT_NE(row.find(">shrank<"), std::string::npos);
  EXPECT_NE(row.find("Width: growth + shrinkage"), std::string::npos);
  EXPECT_EQ(testing::XmlWellFormednessError(svg), "");
  // The diff's own script comes after the main one, which is unchanged.
  EXPECT_NE(svg.find("data-diff-ready"), std::string::npos);
  EXPECT_LT(svg.find("data-flamegraph-ready"), svg.find("data-diff-ready"));
}

TEST(DiffSvgTest, AnOrdinaryFlameGraphHasNoDiffParts) {
  FakeSymbolizer symbolizer;
  auto aggregation =
      aggregate::AggregateProfile(aggregate::testing::SharedProfile(), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  ASSERT_FALSE(aggregation->is_diff);
  std::string svg = RenderDiffSvg(*aggregation);
  for (const char* diff_only :
       {"data-diff", "legend", " grew", " shrank", "red: grew", " change"}) {
    EXPECT_EQ(svg.find(diff_only), std::string::npos) << diff_only;
  }
}

}  // namespace
}  // namespace memprof::report::render
