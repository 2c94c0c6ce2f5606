// The svg flame graph in a real browser: a dump made
// now by many_stacks_target, parsed, symbolized with the libdwfl symbolizer,
// rendered, then opened in headless Chromium. --dump-dom shows the DOM after
// the embedded script ran (it marks the <svg> when it has initialized, and
// records uncaught errors there); --screenshot shows that frames are drawn.
// Chromium is required: without one that runs, the tests fail and say so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/base_profile.h"
#include "cli/report/aggregate/unsample.h"
#include "cli/report/parse/heap_v2_parser.h"
#include "cli/report/render/svg_report.h"
#include "cli/report/symbolize/symbolizer.h"
#include "tests/cli/report/render/xml_check.h"
#include "tests/support/debian_tools.h"
#include "tests/support/files.h"
#include "tests/support/occurrences.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::render {
namespace {

namespace fs = std::filesystem;
using test_support::Quote;
using test_support::RunShellCommand;
using test_support::ShellOutput;

const std::string kTarget = MEMPROF_MANY_STACKS_TARGET;
constexpr int kStacks = 300;

// The libdwfl symbolizer behind the AddressSymbolizer interface. The aggregation
// hands over lookup addresses (callers already minus one), so ResolvePc.
class DwflSymbolizer final : public aggregate::AddressSymbolizer {
 public:
  explicit DwflSymbolizer(symbolize::Symbolizer symbolizer) : symbolizer_(std::move(symbolizer)) {}

  std::span<const aggregate::Frame> Resolve(uint64_t address) override {
    frames_.clear();
    for (const symbolize::Frame& frame : symbolizer_.ResolvePc(address)) {
      frames_.push_back(
          {frame.function, frame.file, frame.line, frame.module, frame.module_offset});
    }
    return frames_;
  }

 private:
  symbolize::Symbolizer symbolizer_;
  std::vector<aggregate::Frame> frames_;
};

std::string Attribute(const std::string& dom, const std::string& name) {
  std::smatch match;
  std::regex pattern(name + "=\"([^\"]*)\"");
  return std::regex_search(dom, match, pattern) ? match[1].str() : "<absent>";
}

// many_stacks_target dumps its own heap once, sampling every allocation.
// Without ASLR (setarch -R) two runs put the same code at the same
// addresses, so a --base diff matches their stacks, as in production
// between two dumps of one process.
void MakeDump(const fs::path& dump, const std::string& args) {
  ShellOutput run = RunShellCommand(
      "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 setarch x86_64 -R " +
      Quote(kTarget) + " " + args + " --self-dump " + Quote(dump.string()) + " --once 2>&1");
  ASSERT_TRUE(run.ok()) << run.text;
}

HeapProfile Load(const fs::path& dump) {
  auto parsed = parse::ParseHeapV2File(dump.string());
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message;
  return parsed ? aggregate::Unsample(std::move(*parsed)) : HeapProfile{};
}

// Symbolized with libdwfl from the dump's maps and written as svg.
void RenderSvg(const HeapProfile& profile, const fs::path& svg) {
  auto symbolizer = symbolize::Symbolizer::FromMapsLines(profile.mapped_libraries);
  ASSERT_TRUE(symbolizer.has_value()) << symbolizer.error().message;
  DwflSymbolizer adapter(std::move(*symbolizer));
  auto aggregation = aggregate::AggregateProfile(profile, adapter, {});
  ASSERT_TRUE(aggregation.has_value()) << aggregation.error().message;
  std::ofstream out(svg);
  ASSERT_TRUE(SvgReportRenderer().Render(*aggregation, out).has_value());
}

class FlameGraphBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_support::CanRun(test_support::Chromium(), &chromium_));
    ASSERT_FALSE(dir_.path().empty()) << "mkdtemp failed";
    svg_path_ = dir_.File("heap.svg");
    ASSERT_NO_FATAL_FAILURE(RenderDump());
    svg_ = test_support::ReadFile(svg_path_.string());
    frames_ = test_support::CountOccurrences(svg_, "<g class=\"f");
  }

  virtual void RenderDump() {
    fs::path dump = dir_.File("many.heap");
    ASSERT_NO_FATAL_FAILURE(MakeDump(dump, "--stacks " + std::to_string(kStacks)));
    ASSERT_NO_FATAL_FAILURE(RenderSvg(Load(dump), svg_path_));
  }

  // Chromium with a throw-away profile directory, bounded in time: headless
  // mode exits by itself once the page settled (virtual time), and
  // `timeout` kills it if it ever does not.
  ShellOutput Chromium(const std::string& mode, const std::string& fragment = "") {
    std::string url = "file://" + svg_path_.string() + fragment;
    return RunShellCommand("timeout -k 5 120 " + Quote(chromium_) +
                           " --headless --disable-gpu --no-sandbox --no-first-run"
                           " --user-data-dir=" +
                           Quote(dir_.File("profile")) +
                           " --virtual-time-budget=5000 --window-size=1200,800 " + mode + " " +
                           Quote(url) + " 2>/dev/null");
  }

  // The graph opened at #search=`search`&zoom=`index`, as a link would open
  // it: the script ran without error, zoomed to frame `index`, hid frames
  // outside it and matched some. The DOM goes to `dom` for further checks.
  void ExpectSearchAndZoom(const std::string& search, size_t index, std::string* dom = nullptr) {
    ShellOutput page =
        Chromium("--dump-dom", "#search=" + search + "&zoom=" + std::to_string(index));
    ASSERT_TRUE(page.ok());
    EXPECT_EQ(Attribute(page.text, "data-flamegraph-error"), "<absent>");
    EXPECT_EQ(Attribute(page.text, "data-zoomed"), std::to_string(index));
    EXPECT_GT(std::stoul("0" + Attribute(page.text, "data-matched-frames")), 0u);
    EXPECT_NE(page.text.find("style=\"display: none;\""), std::string::npos) << "zoom hid nothing";
    if (dom != nullptr) *dom = page.text;
  }

  // A PNG of the window; empty (and a test failure) if it is not one.
  std::string Screenshot() {
    fs::path png = dir_.File("flamegraph.png");
    ShellOutput shot = Chromium("--screenshot=" + Quote(png.string()));
    EXPECT_TRUE(shot.ok());
    std::string bytes = test_support::ReadFile(png.string());
    EXPECT_GT(bytes.size(), 24u);
    EXPECT_EQ(bytes.substr(0, 8), "\x89PNG\r\n\x1a\n");
    return bytes;
  }

  test_support::TempDir dir_{"flame_browser"};
  std::string chromium_;
  fs::path svg_path_;
  std::string svg_;
  size_t frames_ = 0;
};

TEST_F(FlameGraphBrowserTest, ScriptInitializesOverEveryFrame) {
  // The tree of a 300-stack binary fan-out: the branch levels and main.
  ASSERT_GT(frames_, 20u);
  EXPECT_NE(svg_.find(">main<"), std::string::npos);
  EXPECT_NE(svg_.find("ManyStacksBranch"), std::string::npos);
  ShellOutput dom = Chromium("--dump-dom");
  ASSERT_TRUE(dom.ok()) << dom.text.substr(0, 2000);
  EXPECT_EQ(Attribute(dom.text, "data-flamegraph-ready"), std::to_string(frames_));
  EXPECT_EQ(Attribute(dom.text, "data-flamegraph-error"), "<absent>");
  EXPECT_EQ(test_support::CountOccurrences(dom.text, "<g class=\"f"), frames_);
  EXPECT_EQ(test_support::CountOccurrences(dom.text, "<rect "),
            frames_ + 1);  // plus the background
}

// Search and zoom through the URL fragment, as a link would apply them.
TEST_F(FlameGraphBrowserTest, SearchAndZoomFromTheFragment) {
  size_t branch_index = 0;
  std::vector<std::string> titles;
  std::regex title("<g class=\"f[^\"]*\"[^>]*><title>([^&<]*)");
  for (auto it = std::sregex_iterator(svg_.begin(), svg_.end(), title);
       it != std::sregex_iterator(); ++it) {
    titles.push_back((*it)[1]);
  }
  ASSERT_EQ(titles.size(), frames_);
  while (branch_index < titles.size() && titles[branch_index].find("ManyStacksBranch1") != 0) {
    ++branch_index;
  }
  ASSERT_LT(branch_index, titles.size()) << "no ManyStacksBranch1 frame drawn";
  std::string dom;
  ASSERT_NO_FATAL_FAILURE(ExpectSearchAndZoom("ManyStacksBranch1", branch_index, &dom));
  EXPECT_NE(dom.find(">Matched: "), std::string::npos);
  EXPECT_NE(dom.find("class=\"f ancestor\""), std::string::npos) << "no caller kept";
}

// A PNG of the window size that is more than a blank page. Set
// MEMPROF_FLAMEGRAPH_SCREENSHOT to keep a copy.
TEST_F(FlameGraphBrowserTest, ScreenshotShowsFrames) {
  std::string bytes = Screenshot();
  ASSERT_GT(bytes.size(), 24u);
  auto be32 = [&](size_t at) {
    uint32_t value = 0;
    for (size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
    return value;
  };
  EXPECT_EQ(be32(16), 1200u);  // IHDR width and height
  EXPECT_EQ(be32(20), 800u);
  // A blank 1200x800 page compresses to a few KB; coloured, labelled frames do not.
  EXPECT_GT(bytes.size(), 20000u);
  if (const char* keep = std::getenv("MEMPROF_FLAMEGRAPH_SCREENSHOT"))
    fs::copy_file(dir_.File("flamegraph.png"), keep, fs::copy_options::overwrite_existing);
}

// A differential flame graph (--base) from two real dumps: 96 stacks of
// 256 B now against 128 stacks of 64 B before, so the first 96 stacks grew
// and the other 32 are gone, and frames of both colour families are drawn.
class DiffFlameGraphBrowserTest : public FlameGraphBrowserTest {
 protected:
  void RenderDump() override {
    fs::path now = dir_.File("now.heap");
    fs::path base = dir_.File("base.heap");
    ASSERT_NO_FATAL_FAILURE(MakeDump(now, "--stacks 96 --bytes 256"));
    ASSERT_NO_FATAL_FAILURE(MakeDump(base, "--stacks 128 --bytes 64"));
    ASSERT_NO_FATAL_FAILURE(RenderSvg(aggregate::SubtractBase(Load(now), Load(base)), svg_path_));
  }
};

// The fills of the frames in the DOM after both scripts ran, by family.
std::vector<std::string> FillsOf(const std::string& dom, const std::string& family) {
  std::vector<std::string> fills;
  std::regex frame("<g class=\"f " + family +
                   "\"[^>]*><title>[^<]*</title><rect [^>]*fill=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), frame); it != std::sregex_iterator();
       ++it) {
    fills.push_back((*it)[1]);
  }
  return fills;
}

int Hue(const std::string& fill) {
  std::smatch match;
  return std::regex_match(fill, match, std::regex("hsl\\((\\d+),.*")) ? std::stoi(match[1]) : -1;
}

TEST_F(DiffFlameGraphBrowserTest, BothScriptsInitializeAndBothFamiliesAreDrawn) {
  ASSERT_GT(frames_, 20u);
  EXPECT_NE(svg_.find("data-diff=\"1\""), std::string::npos);
  EXPECT_NE(svg_.find("ManyStacksBranch"), std::string::npos);
  ShellOutput dom = Chromium("--dump-dom");
  ASSERT_TRUE(dom.ok()) << dom.text.substr(0, 2000);
  EXPECT_EQ(Attribute(dom.text, "data-flamegraph-error"), "<absent>");
  EXPECT_EQ(Attribute(dom.text, "data-flamegraph-ready"), std::to_string(frames_));
  EXPECT_EQ(Attribute(dom.text, "data-diff-ready"), std::to_string(frames_));
  std::vector<std::string> grew = FillsOf(dom.text, "grew");
  std::vector<std::string> shrank = FillsOf(dom.text, "shrank");
  EXPECT_EQ(Attribute(dom.text, "data-diff-grew"), std::to_string(grew.size()));
  EXPECT_EQ(Attribute(dom.text, "data-diff-shrank"), std::to_string(shrank.size()));
  ASSERT_GT(grew.size(), 0u);
  ASSERT_GT(shrank.size(), 0u);
  for (const std::string& fill : grew) EXPECT_LE(Hue(fill), 40) << fill;
  for (const std::string& fill : shrank) EXPECT_GE(Hue(fill), 195) << fill;
  EXPECT_EQ(test_support::CountOccurrences(dom.text, "data-family=\""), 7u);  // the legend
  // Every stack of the 32 that are gone passes through main: it shrank
  // somewhere below a frame that grew overall.
  EXPECT_NE(svg_.find("<title>main&#10;+"), std::string::npos);
}

// Zoom and search still work on a differential graph.
TEST_F(DiffFlameGraphBrowserTest, SearchAndZoomStillWork) {
  const std::string shrank = "<g class=\"f shrank\"";
  std::vector<size_t> starts;
  for (size_t at = svg_.find("<g class=\"f"); at != std::string::npos;
       at = svg_.find("<g class=\"f", at + 1)) {
    starts.push_back(at);
  }
  size_t index = 0;
  while (index < starts.size() && svg_.compare(starts[index], shrank.size(), shrank) != 0) {
    ++index;
  }
  ASSERT_LT(index, starts.size()) << "no frame shrank";
  ASSERT_NO_FATAL_FAILURE(ExpectSearchAndZoom("ManyStacksBranch", index));
}

// Set MEMPROF_DIFF_FLAMEGRAPH_SCREENSHOT to keep a copy (the user guide's
// picture is made this way).
TEST_F(DiffFlameGraphBrowserTest, ScreenshotShowsFrames) {
  std::string bytes = Screenshot();
  EXPECT_GT(bytes.size(), 20000u);
  if (const char* keep = std::getenv("MEMPROF_DIFF_FLAMEGRAPH_SCREENSHOT"))
    fs::copy_file(dir_.File("flamegraph.png"), keep, fs::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace memprof::report::render
