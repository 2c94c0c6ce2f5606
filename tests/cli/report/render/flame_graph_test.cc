// The svg flame graph: the call tree, the layout (widths, tiny frames), XML
// escaping and well-formedness, on the shared fake-symbolized profile.
#include "cli/report/render/flame_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/render/flame_layout.h"
#include "cli/report/render/svg_report.h"
#include "cli/report/render/xml_text.h"
#include "tests/cli/report/aggregate/fake_symbolizer.h"
#include "tests/cli/report/render/xml_check.h"
#include "tests/support/debian_tools.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::render {
namespace {

using aggregate::testing::FakeSymbolizer;
using aggregate::testing::SharedProfile;

aggregate::Aggregation AggregateBy(const HeapProfile& profile,
                                   Metric metric = Metric::kInuseSpace) {
  FakeSymbolizer symbolizer;
  aggregate::AggregateOptions options;
  options.metric = metric;
  auto aggregation = aggregate::AggregateProfile(profile, symbolizer, options);
  EXPECT_TRUE(aggregation.has_value());
  return aggregation.value_or(aggregate::Aggregation{});
}

std::string RenderSvg(const aggregate::Aggregation& aggregation, const SvgOptions& options = {}) {
  std::ostringstream out;
  auto ok = SvgReportRenderer(options).Render(aggregation, out);
  EXPECT_TRUE(ok.has_value()) << ok.error().message;
  return out.str();
}

// "name=value/depth" per node in pre-order (children in their sorted order).
std::string Describe(const FlameGraph& graph, uint32_t node = 0) {
  const FlameNode& n = graph.nodes[node];
  std::string text = graph.name(n) + "=" + std::to_string(static_cast<long>(n.value)) + "/" +
                     std::to_string(n.depth);
  for (uint32_t child : graph.children(n)) text += " " + Describe(graph, child);
  return text;
}

// The values of every data-v, the x and the width of every frame <rect>.
struct SvgFrame {
  std::string title;
  double x = 0;
  double width = 0;
  std::string fill;
  std::string label;
};

std::vector<SvgFrame> Frames(const std::string& svg) {
  static const std::regex kFrame(
      "<g class=\"f[^\"]*\"[^>]*><title>([^<]*)</title><rect x=\"([0-9.]+)\" y=\"[0-9.]+\" "
      "width=\"([0-9.]+)\"[^>]* fill=\"([^\"]+)\"/><text[^>]*>([^<]*)</text></g>");
  std::vector<SvgFrame> frames;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kFrame); it != std::sregex_iterator();
       ++it) {
    frames.push_back({(*it)[1], std::stod((*it)[2]), std::stod((*it)[3]), (*it)[4], (*it)[5]});
  }
  return frames;
}

TEST(FlameGraphTest, TreeFollowsTheCollapsedStacks) {
  // Collapsed: main;Caller(int);Helper<int>(int)[inline];Leaf(int) 1000,
  // main;Caller(int);Helper<int>(int)[inline] 500,
  // main;Recursive(int);Recursive(int);Leaf(int) 250, 0x8ff 100, and a
  // stack of allocator frames only (50) that counts in the root alone.
  FlameGraph graph = BuildFlameGraph(AggregateBy(SharedProfile()));
  EXPECT_EQ(Describe(graph),
            "all=1900/0 main=1750/1 Caller(int)=1500/2 Helper<int>(int)[inline]=1500/3 "
            "Leaf(int)=1000/4 Recursive(int)=250/2 Recursive(int)=250/3 Leaf(int)=250/4 "
            "0x8ff=100/1");
  EXPECT_EQ(graph.nodes.size(), 9u);
  EXPECT_EQ(graph.profile_total, 1900);
  EXPECT_EQ(graph.negative_stacks, 0u);
}

TEST(FlameGraphTest, ObjectsMetric) {
  FlameGraph graph = BuildFlameGraph(AggregateBy(SharedProfile(), Metric::kInuseObjects));
  EXPECT_EQ(graph.metric, Metric::kInuseObjects);
  EXPECT_EQ(Describe(graph).substr(0, 25), "all=19/0 main=17/1 Caller");
}

TEST(FlameGraphTest, MergesSameNamesAtSameCallerAndOrdersByValueThenName) {
  HeapProfile profile;
  profile.sample_period = 1;
  auto add = [&](std::vector<uint64_t> stack, double bytes) {
    profile.samples.push_back({std::move(stack), {1, bytes}, {}});
  };
  // Different addresses inside the same functions (Leaf at 0x310/0x330,
  // main at 0x510/0x530): one path once named.
  add({0x310, 0x510}, 100);
  add({0x330, 0x530}, 200);
  add({0x710, 0x520}, 300);  // Recursive(int) under main: ties with Leaf...
  FlameGraph graph = BuildFlameGraph(AggregateBy(profile));
  EXPECT_EQ(Describe(graph), "all=600/0 main=600/1 Leaf(int)=300/2 Recursive(int)=300/2");
  add({0x320, 0x540}, 1);  // ... until one more byte
  graph = BuildFlameGraph(AggregateBy(profile));
  EXPECT_EQ(Describe(graph), "all=601/0 main=601/1 Leaf(int)=301/2 Recursive(int)=300/2");
}

TEST(FlameGraphTest, ClassifiesFramesForColour) {
  EXPECT_EQ(ClassifyFrame({"Leaf(int)", "", 0, "app", 0}), FrameKind::kApp);
  EXPECT_EQ(ClassifyFrame({"__libc_start_main", "", 0, "libc.so.6", 0}), FrameKind::kRuntime);
  EXPECT_EQ(ClassifyFrame({"std::vector<int>::push_back(int const&)", "", 0, "app", 0}),
            FrameKind::kRuntime);
  EXPECT_EQ(ClassifyFrame({"je_prof_backtrace", "", 0, "app", 0}), FrameKind::kRuntime);
  EXPECT_EQ(ClassifyFrame({"libfoo.so+0x1a2b", "", 0, "libfoo.so", 0}), FrameKind::kUnknown);
  EXPECT_EQ(ClassifyFrame({"", "", 0, "", 0}), FrameKind::kUnknown);
  EXPECT_EQ(ClassifyFrame({"libjemalloc.so.2+0xa2630", "", 0, "libjemalloc.so.2", 0}),
            FrameKind::kRuntime);
}

// Appends a node named `name` (its own entry in graph.names).
void AddNode(FlameGraph& graph, std::string name, FrameKind kind, double value, uint32_t depth) {
  graph.nodes.push_back({static_cast<uint32_t>(graph.names.size()), kind, value, depth, 0, 0});
  graph.names.push_back(std::move(name));
}

FlameGraph TinyChildren(std::vector<double> values) {
  FlameGraph graph;
  AddNode(graph, "all", FrameKind::kRoot, 0, 0);
  std::vector<uint32_t> children;
  for (double value : values) {
    children.push_back(static_cast<uint32_t>(graph.nodes.size()));
    graph.nodes[0].value += value;
    AddNode(graph, "c" + std::to_string(graph.nodes.size()), FrameKind::kApp, value, 1);
  }
  graph.SetChildren(0, children);
  graph.profile_total = graph.nodes[0].value;
  return graph;
}

TEST(FlameLayoutTest, MergesTinySiblingsWhenTogetherWideEnough) {
  FlameGraph graph = TinyChildren({9970, 10, 5, 5, 5, 5});  // 0.1% of 10000 is 10
  FlameLayout layout = LayoutFlameGraph(graph, 0.001);
  ASSERT_EQ(layout.rects.size(), 4u);  // root, c1, c2, and [4 small frames]
  EXPECT_EQ(layout.rects[1].node, 1u);
  EXPECT_EQ(layout.rects[1].offset, 0);
  EXPECT_EQ(layout.rects[2].node, 2u);
  EXPECT_EQ(layout.rects[2].offset, 9970);
  const FlameRect& merged = layout.rects[3];
  EXPECT_EQ(merged.node, FlameRect::kMergedNode);
  EXPECT_EQ(merged.merged_frames, 4u);
  EXPECT_EQ(merged.offset, 9980);
  EXPECT_EQ(merged.value, 20);
  EXPECT_EQ(merged.depth, 1u);
  EXPECT_EQ(layout.omitted_frames, 4u);
}

TEST(FlameLayoutTest, OmitsTinyFramesAndEverythingTheyCall) {
  FlameGraph graph = TinyChildren({9991, 9});
  // A callee under the tiny frame: dropped with it, counted as omitted.
  graph.SetChildren(2, std::vector<uint32_t>{3});
  AddNode(graph, "callee", FrameKind::kApp, 9, 2);
  FlameLayout layout = LayoutFlameGraph(graph, 0.001);
  ASSERT_EQ(layout.rects.size(), 2u);
  EXPECT_EQ(layout.omitted_frames, 2u);
  EXPECT_EQ(layout.max_depth, 1u);
  EXPECT_EQ(LayoutFlameGraph(graph, 0).rects.size(), 4u);  // no threshold: all drawn
}

// main calls big (10,000 B) and tiny (9 B, under 0.1% of the root), and
// tiny calls a tree of its own: a (x, y, and 1 B ending at a), b -> c -> d.
aggregate::Aggregation NarrowSubtree() {
  aggregate::Aggregation aggregation;
  const std::vector<std::string> names = {"main", "big", "tiny", "a", "x", "y", "b", "c", "d"};
  for (uint32_t i = 0; i < names.size(); ++i) {
    aggregation.locations.push_back({0x100 + i, {{names[i], "", 0, "app", 0}}, {names[i]}});
  }
  // Leaf first, as the aggregation keeps them.
  const std::vector<std::pair<std::vector<uint32_t>, double>> stacks = {
      {{1, 0}, 10000}, {{4, 3, 2, 0}, 3}, {{5, 3, 2, 0}, 3}, {{8, 7, 6, 2, 0}, 2}, {{3, 2, 0}, 1}};
  for (const auto& [locations, value] : stacks) {
    aggregation.stacks.push_back({locations, value});
    aggregation.total += value;
  }
  aggregation.shown_total = aggregation.total;
  return aggregation;
}

// The builder makes no callees of a frame too narrow to draw, and the
// layout still counts them among the omitted frames.
TEST(FlameGraphTest, WithAMinFractionNarrowFramesGetNoCalleesButStillCount) {
  const aggregate::Aggregation aggregation = NarrowSubtree();
  const FlameGraph whole = BuildFlameGraph(aggregation);
  const FlameGraph pruned = BuildFlameGraph(aggregation, 0.001);
  EXPECT_EQ(whole.nodes.size(), 10u);
  EXPECT_EQ(Describe(pruned), "all=10009/0 main=10009/1 big=10000/2 tiny=9/2");
  EXPECT_EQ(SubtreeSize(whole, 3), 7u);
  EXPECT_EQ(SubtreeSize(pruned, 3), 7u);  // tiny and the 6 nodes under it
  const FlameLayout from_whole = LayoutFlameGraph(whole, 0.001);
  const FlameLayout from_pruned = LayoutFlameGraph(pruned, 0.001);
  EXPECT_EQ(from_pruned.omitted_frames, 7u);
  EXPECT_EQ(from_pruned.omitted_frames, from_whole.omitted_frames);
  ASSERT_EQ(from_pruned.rects.size(), from_whole.rects.size());
  SvgOptions options;
  options.min_frame_fraction = 0.001;
  std::ostringstream from_whole_svg;
  std::ostringstream from_pruned_svg;
  WriteFlameGraphSvg(whole, from_whole, options, from_whole_svg);
  WriteFlameGraphSvg(pruned, from_pruned, options, from_pruned_svg);
  EXPECT_EQ(from_pruned_svg.str(), from_whole_svg.str());
}

// An aggregation of the given stacks (root first, by name), one location
// per name.
aggregate::Aggregation StacksOf(
    const std::vector<std::pair<std::vector<std::string>, double>>& stacks) {
  aggregate::Aggregation aggregation;
  std::vector<std::string> names;
  for (const auto& [path, value] : stacks) {
    std::vector<uint32_t> locations;  // leaf first, as the aggregation keeps them
    for (const std::string& name : path) {
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        aggregation.locations.push_back({0x100 + names.size(), {{name, "", 0, "app", 0}}, {name}});
        it = names.insert(names.end(), name);
      }
      locations.insert(locations.begin(), static_cast<uint32_t>(it - names.begin()));
    }
    aggregation.stacks.push_back({locations, value});
    aggregation.total += value;
  }
  aggregation.shown_total = aggregation.total;
  return aggregation;
}

// Stacks that go on through the same frames for several levels share one
// node per level, also when one of them ends part way along the run and
// when the rest part after it.
TEST(FlameGraphTest, StacksSharingARunOfFramesShareItsNodes) {
  const aggregate::Aggregation aggregation = StacksOf({{{"main", "a", "b", "c", "d"}, 5},
                                                       {{"main", "a", "b"}, 3},
                                                       {{"main", "a", "b", "c", "e"}, 2},
                                                       {{"main", "f"}, 1}});
  const FlameGraph graph = BuildFlameGraph(aggregation);
  EXPECT_EQ(Describe(graph), "all=11/0 main=11/1 a=10/2 b=10/3 c=7/4 d=5/5 e=2/5 f=1/2");
  EXPECT_EQ(graph.nodes.size(), 8u);
}

// A frame too narrow to draw on a run that its stacks share: it is made, the
// run's nodes below it are not, and each of them still counts.
TEST(FlameGraphTest, ANarrowRunOfSharedFramesStillCountsEveryNode) {
  const aggregate::Aggregation aggregation = StacksOf({{{"main", "big"}, 10000},
                                                       {{"main", "tiny", "p", "q", "r"}, 4},
                                                       {{"main", "tiny", "p", "q", "s"}, 5},
                                                       {{"main", "tiny", "p", "q"}, 1}});
  const FlameGraph whole = BuildFlameGraph(aggregation);
  const FlameGraph pruned = BuildFlameGraph(aggregation, 0.001);
  EXPECT_EQ(Describe(whole),
            "all=10010/0 main=10010/1 big=10000/2 tiny=10/2 p=10/3 q=10/4 "
            "s=5/5 r=4/5");
  EXPECT_EQ(Describe(pruned), "all=10010/0 main=10010/1 big=10000/2 tiny=10/2");
  EXPECT_EQ(SubtreeSize(pruned, 3), 5u);  // tiny, p, q, r and s
  EXPECT_EQ(SubtreeSize(whole, 3), 5u);
}

// In a diff, a shared run carries the net change of its stacks.
TEST(FlameGraphTest, ADiffSumsTheChangeAlongASharedRun) {
  aggregate::Aggregation aggregation =
      StacksOf({{{"main", "a", "b", "c"}, 6}, {{"main", "a", "b", "d"}, -4}});
  aggregation.is_diff = true;
  aggregation.stacks[0].base = 10;
  aggregation.stacks[1].base = 20;
  const FlameGraph graph = BuildFlameGraph(aggregation);
  ASSERT_EQ(graph.nodes.size(), 6u);
  for (uint32_t node : {1u, 2u, 3u}) {  // main, a, b
    EXPECT_EQ(graph.change(node).change, 2) << graph.name(graph.nodes[node]);
    EXPECT_EQ(graph.change(node).base, 30) << graph.name(graph.nodes[node]);
    EXPECT_EQ(graph.nodes[node].value, 10) << graph.name(graph.nodes[node]);  // |6| + |-4|
  }
}

// A diff's widths are known only once its whole tree is: nothing is left out.
TEST(FlameGraphTest, ADiffIsAlwaysWhole) {
  aggregate::Aggregation aggregation = NarrowSubtree();
  aggregation.is_diff = true;
  for (aggregate::StackSample& stack : aggregation.stacks) stack.base = 0;
  EXPECT_EQ(BuildFlameGraph(aggregation, 0.001).nodes.size(), 10u);
}

TEST(SvgReportTest, FrameCountAndProportionalWidths) {
  std::string svg = RenderSvg(AggregateBy(SharedProfile()));
  std::vector<SvgFrame> frames = Frames(svg);
  ASSERT_EQ(frames.size(), 9u);
  EXPECT_NE(svg.find("data-frames=\"9\""), std::string::npos);
  EXPECT_NE(svg.find("in-use space, total 1.9 KiB"), std::string::npos);
  // 1200 px wide minus 10 px padding each side; main is 1750 of 1900.
  EXPECT_EQ(frames[0].title, "all&#10;1.9 KiB (100.00%)");
  EXPECT_DOUBLE_EQ(frames[0].x, 10);
  EXPECT_DOUBLE_EQ(frames[0].width, 1180);
  EXPECT_NEAR(frames[1].width, 1180.0 * 1750 / 1900, 0.005);
  EXPECT_EQ(frames[1].label, "main");
  // 0x8ff comes after main's subtree, at main's right edge.
  EXPECT_EQ(frames[8].title, "0x8ff&#10;100 B (5.26%)");
  EXPECT_NEAR(frames[8].x, 10 + 1180.0 * 1750 / 1900, 0.005);
  EXPECT_EQ(frames[8].fill.substr(0, 8), "hsl(0,0%");  // unknown: grey
  // Both Leaf(int) frames share a colour; a name always gets the same one.
  EXPECT_EQ(frames[4].fill, frames[7].fill);
  EXPECT_EQ(RenderSvg(AggregateBy(SharedProfile())), svg);
}

std::string Unescape(std::string text) {
  for (auto [entity, c] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at)) {
      text.replace(at, std::string(entity).size(), c);
    }
  }
  return text;
}

TEST(SvgReportTest, LabelsAreCutToTheFrameWidth) {
  // 200 px wide: 180 px for 1900 B. Helper (1500 B) is 142 px: 18 characters
  // fit, so 16 of its 24 and "..". Recursive (250 B) is 23.7 px: below 3
  // characters, no label at all.
  std::string svg = RenderSvg(AggregateBy(SharedProfile()), SvgOptions{"t", 200, 0.001});
  std::vector<SvgFrame> frames = Frames(svg);
  ASSERT_EQ(frames.size(), 9u);
  EXPECT_EQ(frames[3].label, "Helper&lt;int&gt;(int)..");
  EXPECT_EQ(frames[5].label, "");
  for (const SvgFrame& frame : frames) {
    EXPECT_LE(Unescape(frame.label).size() * 7.2 + 6, frame.width + 7.2) << frame.label;
  }
  // At the default width everything fits.
  EXPECT_NE(RenderSvg(AggregateBy(SharedProfile())).find(">Recursive(int)</text>"),
            std::string::npos);
}

TEST(XmlTextTest, EscapesMarkupAndQuotesInTemplateNames) {
  EXPECT_EQ(XmlEscape("std::map<int, std::string>::operator[](int const&)"),
            "std::map&lt;int, std::string&gt;::operator[](int const&amp;)");
  EXPECT_EQ(XmlEscape("f<\"a\", 'b'>"), "f&lt;&quot;a&quot;, &apos;b&apos;&gt;");
  EXPECT_EQ(XmlEscape("operator&&"), "operator&amp;&amp;");
  EXPECT_EQ(XmlEscape("]]>"), "]]&gt;");
}

TEST(XmlTextTest, ReplacesWhatXmlCannotCarry) {
  EXPECT_EQ(XmlEscape("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5");  // é € 🔥 stay
  EXPECT_EQ(XmlEscape("a\x01"
                      "b\nc\td"),
            "a?b?c\td");                        // controls; tab is legal
  EXPECT_EQ(XmlEscape("\xFF\xC3"), "??");       // not UTF-8, truncated sequence
  EXPECT_EQ(XmlEscape("\xC0\xAF"), "??");       // overlong '/'
  EXPECT_EQ(XmlEscape("\xED\xA0\x80"), "???");  // a UTF-16 surrogate
  EXPECT_EQ(XmlEscape("\xEF\xBF\xBF"), "???");  // U+FFFF
  EXPECT_EQ(Utf8Prefix("\xC3\xA9\xC3\xA9x", 2), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(Utf8Length("\xC3\xA9x"), 2u);
}

HeapProfile HostileNamesProfile() {
  HeapProfile profile;
  profile.sample_period = 1;
  profile.samples.push_back({{0x3110, 0x3210}, {1, 4096}, {}});
  return profile;
}

TEST(SvgReportTest, ParsesAsXmlWithHostileNames) {
  FakeSymbolizer symbolizer;
  symbolizer.Add(0x31, {{"Get<std::pair<int, char const*> >(\"x\" & 'y')]]>", "", 0, "app", 0}});
  symbolizer.Add(0x32, {{"main\x01\xFF</svg><script>alert(1)</script>", "", 0, "app", 0}});
  auto aggregation = aggregate::AggregateProfile(HostileNamesProfile(), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  std::string svg = RenderSvg(*aggregation, SvgOptions{"<title> & \"quotes\"", 1200, 0.001});
  EXPECT_EQ(testing::XmlWellFormednessError(svg), "");
  EXPECT_EQ(svg.find("<script>alert"), std::string::npos);
  EXPECT_NE(svg.find("Get&lt;std::pair&lt;int, char const*&gt; &gt;(&quot;x&quot; &amp; "
                     "&apos;y&apos;)]]&gt;"),
            std::string::npos);

  std::string xmllint;
  ASSERT_TRUE(test_support::CanRun(test_support::Xmllint(), &xmllint));
  test_support::TempDir dir("flame_graph_test");
  const std::string path = dir.File("escaping.svg");
  std::ofstream(path) << svg;
  testing::XmllintResult lint = testing::RunXmllint(xmllint, path);
  EXPECT_TRUE(lint.ok) << lint.output;
}

TEST(SvgReportTest, TheWellFormednessCheckCanFail) {
  EXPECT_EQ(testing::XmlWellFormednessError("<a><b x=\"1\"/>t&amp;</a>"), "");
  EXPECT_NE(testing::XmlWellFormednessError("<a><b></a></b>"), "");
  EXPECT_NE(testing::XmlWellFormednessError("<a>x & y</a>"), "");
  EXPECT_NE(testing::XmlWellFormednessError("<a b=\"<\"/>"), "");
  EXPECT_NE(testing::XmlWellFormednessError("<a/><b/>"), "");
  EXPECT_NE(testing::XmlWellFormednessError("<a>"), "");
}

// 20,000 distinct stacks main -> f<i>: each f<i> is 0.005% of the total,
// so they merge into one rectangle and the file stays small.
TEST(SvgReportTest, BigProfilesStaySmall) {
  constexpr uint32_t kStacks = 20000;
  aggregate::Aggregation aggregation;
  aggregation.locations.push_back({0x1, {{"main", "", 0, "app", 0}}, {"main"}});
  for (uint32_t i = 0; i < kStacks; ++i) {
    std::string name = "f" + std::to_string(i);
    aggregation.locations.push_back({0x100 + i, {{name, "", 0, "app", 0}}, {name}});
    aggregation.stacks.push_back({{i + 1, 0}, 64});
  }
  aggregation.total = aggregation.shown_total = 64.0 * kStacks;
  std::string svg = RenderSvg(aggregation);
  std::vector<SvgFrame> frames = Frames(svg);
  ASSERT_EQ(frames.size(), 3u);  // all, main, [20000 small frames]
  EXPECT_EQ(frames[2].title, "[20000 small frames]&#10;1.2 MiB (100.00%)");
  EXPECT_NE(svg.find("20,000 narrower than 0.1% merged or omitted"), std::string::npos);
  EXPECT_LT(svg.size(), 20000u);
  EXPECT_EQ(testing::XmlWellFormednessError(svg), "");
}

TEST(SvgReportTest, HumanUnits) {
  EXPECT_EQ(HumanValue(512, Metric::kInuseSpace), "512 B");
  EXPECT_EQ(HumanValue(1536, Metric::kInuseSpace), "1.5 KiB");
  EXPECT_EQ(HumanValue(3.5 * 1048576, Metric::kAllocSpace), "3.5 MiB");
  EXPECT_EQ(HumanValue(1234567.4, Metric::kInuseObjects), "1,234,567 objects");
  EXPECT_EQ(HumanValue(12, Metric::kInuseObjects), "12 objects");
}

TEST(SvgReportTest, EmbedsItsScriptAndNothingExternal) {
  std::string svg = RenderSvg(AggregateBy(SharedProfile()));
  EXPECT_NE(svg.find("<script type=\"text/ecmascript\"><![CDATA["), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_EQ(svg.find("http://", svg.find("<style")), std::string::npos);  // only the xmlns
}

}  // namespace
}  // namespace memprof::report::render
