// The svg flame graph in a real browser (issue 4's "done when"): a dump made
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

#include "cli/report/analysis/aggregate.h"
#include "cli/report/analysis/heap_v2_parser.h"
#include "cli/report/analysis/svg_report.h"
#include "cli/report/analysis/unsample.h"
#include "cli/report/symbolize/symbolizer.h"
#include "tests/cli/report/analysis/xml_check.h"
#include "tests/support/debian_tools.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace memprof::analysis {
namespace {

namespace fs = std::filesystem;
using test_support::Quote;
using test_support::RunShellCommand;
using test_support::ShellOutput;

const std::string kTarget = MEMPROF_MANY_STACKS_TARGET;
constexpr int kStacks = 300;

// The libdwfl symbolizer behind the analysis interface. The aggregation
// hands over lookup addresses (callers already minus one), so ResolvePc.
class DwflSymbolizer final : public AddressSymbolizer {
 public:
  explicit DwflSymbolizer(symbolize::Symbolizer symbolizer) : symbolizer_(std::move(symbolizer)) {}

  std::span<const Frame> Resolve(uint64_t address) override {
    frames_.clear();
    for (const symbolize::Frame& frame : symbolizer_.ResolvePc(address)) {
      frames_.push_back(
          {frame.function, frame.file, frame.line, frame.module, frame.module_offset});
    }
    return frames_;
  }

 private:
  symbolize::Symbolizer symbolizer_;
  std::vector<Frame> frames_;
};

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

std::string Attribute(const std::string& dom, const std::string& name) {
  std::smatch match;
  std::regex pattern(name + "=\"([^\"]*)\"");
  return std::regex_search(dom, match, pattern) ? match[1].str() : "<absent>";
}

class FlameGraphBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_support::CanRun(test_support::Chromium(), &chromium_));
    ASSERT_FALSE(dir_.path().empty()) << "mkdtemp failed";
    svg_path_ = dir_.File("heap.svg");
    ASSERT_NO_FATAL_FAILURE(RenderDump());
  }

  // many_stacks_target dumps its own heap once, sampling every allocation.
  void RenderDump() {
    fs::path dump = dir_.File("many.heap");
    ShellOutput run = RunShellCommand("MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 " +
                                      Quote(kTarget) + " --stacks " + std::to_string(kStacks) +
                                      " --self-dump " + Quote(dump.string()) + " --once 2>&1");
    ASSERT_TRUE(run.ok()) << run.text;
    auto parsed = ParseHeapV2File(dump.string());
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
    HeapProfile profile = Unsample(std::move(*parsed));
    auto symbolizer = symbolize::Symbolizer::FromMapsLines(profile.mapped_libraries);
    ASSERT_TRUE(symbolizer.has_value()) << symbolizer.error().message;
    DwflSymbolizer adapter(std::move(*symbolizer));
    auto aggregation = AggregateProfile(profile, adapter, {});
    ASSERT_TRUE(aggregation.has_value()) << aggregation.error().message;
    std::ofstream out(svg_path_);
    ASSERT_TRUE(SvgReportRenderer().Render(*aggregation, out).has_value());
    out.close();
    svg_ = test_support::ReadFile(svg_path_.string());
    frames_ = Count(svg_, "<g class=\"f");
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
  EXPECT_EQ(Count(dom.text, "<g class=\"f"), frames_);
  EXPECT_EQ(Count(dom.text, "<rect "), frames_ + 1);  // plus the background
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
  ShellOutput dom =
      Chromium("--dump-dom", "#search=ManyStacksBranch1&zoom=" + std::to_string(branch_index));
  ASSERT_TRUE(dom.ok());
  EXPECT_EQ(Attribute(dom.text, "data-flamegraph-error"), "<absent>");
  EXPECT_EQ(Attribute(dom.text, "data-zoomed"), std::to_string(branch_index));
  EXPECT_GT(std::stoul("0" + Attribute(dom.text, "data-matched-frames")), 0u);
  EXPECT_NE(dom.text.find(">Matched: "), std::string::npos);
  EXPECT_NE(dom.text.find("style=\"display: none;\""), std::string::npos) << "zoom hid nothing";
  EXPECT_NE(dom.text.find("class=\"f ancestor\""), std::string::npos) << "no caller kept";
}

// A PNG of the window size that is more than a blank page. Set
// MEMPROF_FLAMEGRAPH_SCREENSHOT to keep a copy.
TEST_F(FlameGraphBrowserTest, ScreenshotShowsFrames) {
  fs::path png = dir_.File("flamegraph.png");
  ShellOutput shot = Chromium("--screenshot=" + Quote(png.string()));
  ASSERT_TRUE(shot.ok());
  std::string bytes = test_support::ReadFile(png.string());
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), "\x89PNG\r\n\x1a\n");
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
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace memprof::analysis
