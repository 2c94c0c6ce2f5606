// What a report says about the frames it could not name: module+0xOFFSET
// names, each file's share of the profile, the Debian package to install
// (from dpkg's file lists), the stderr summary and the JSON object.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/report/aggregate/symbolization_summary.h"
#include "cli/report/debian_packages.h"
#include "cli/report/render/json_report.h"
#include "cli/report/report_pipeline.h"
#include "cli/report/symbolization_report.h"
#include "tests/support/temp_dir.h"

namespace memprof::report {
namespace {

using analysis::Aggregation;
using analysis::Frame;

constexpr char kLibFoo[] = "/usr/lib/x86_64-linux-gnu/libfoo.so.1";
constexpr char kLibBar[] = "/opt/bar/libbar.so";

Frame Named(std::string function, std::string module) {
  Frame frame;
  frame.function = std::move(function);
  frame.module = std::move(module);
  return frame;
}

Frame Unnamed(std::string module, uint64_t offset) {
  Frame frame;
  frame.module = std::move(module);
  frame.module_offset = offset;
  return frame;
}

// Locations: 0 named (app), 1 unnamed in libfoo, 2 unnamed in libbar,
// 3 a guess in libfoo. Stacks: named only (60), libfoo (30), libfoo and
// libbar (-10: a --base difference counts by its size).
Aggregation MakeAggregation() {
  Aggregation aggregation;
  aggregation.locations = {{0x1000, {Named("main", "app")}, {}},
                           {0x2000, {Unnamed("libfoo.so.1", 0x1a2b)}, {}},
                           {0x3000, {Unnamed("libbar.so", 0x10)}, {}},
                           {0x4000, {Named("foo_init+0x20?", "libfoo.so.1")}, {}}};
  aggregation.locations[3].frames[0].guessed = true;
  aggregation.stacks = {{{0}, 60}, {{1, 0}, 30}, {{3, 2, 0}, -10}};
  aggregation.total = aggregation.shown_total = 80;
  return aggregation;
}

std::vector<symbolize::ModuleReport> Modules() {
  symbolize::ModuleReport foo;
  foo.path = kLibFoo;
  foo.build_id = "abcdef0123";
  symbolize::ModuleReport bar;
  bar.path = kLibBar;
  bar.problem = "cannot open /opt/bar/libbar.so: No such file or directory";
  return {foo, bar};
}

// A dpkg info directory where libfoo1 lists libfoo under /lib (merged /usr).
class SymbolizationReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("libfoo1:amd64.list")) << "/.\n/lib/x86_64-linux-gnu/libfoo.so.1\n";
    std::ofstream(dir_.File("other.list")) << "/usr/bin/other\n";
    context_.dpkg_info_dir = dir_.path();
  }
  analysis::SymbolizationSummary Summarize() {
    return SummarizeSymbolization(MakeAggregation(), Modules, context_);
  }

  test_support::TempDir dir_;
  SummaryContext context_;
};

TEST(UnnamedFrameNameTest, ModuleAndFileOffsetElseTheAddress) {
  EXPECT_EQ(analysis::UnnamedFrameName(Unnamed("libx.so", 0x1a2b), 0x7f0000001a2b),
            "libx.so+0x1a2b");
  EXPECT_EQ(analysis::UnnamedFrameName(Unnamed("", 0), 0x7f0000001a2b), "0x7f0000001a2b");
}

TEST(CountUnnamedFramesTest, SharesOfTheStacksAbsoluteValues) {
  const analysis::UnnamedFrameShares shares = analysis::CountUnnamedFrames(MakeAggregation());
  EXPECT_DOUBLE_EQ(shares.named_share, 0.6);
  ASSERT_EQ(shares.by_module.size(), 2u);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libfoo.so.1").share, 0.4);
  EXPECT_EQ(shares.by_module.at("libfoo.so.1").addresses, 2u);  // the guess counts
  EXPECT_DOUBLE_EQ(shares.by_module.at("libbar.so").share, 0.1);
  EXPECT_EQ(shares.by_module.at("libbar.so").addresses, 1u);
}

// Two unnamed frames of one file in a stack count that stack once; a file
// whose frames no stack shows (cut away, as tcmalloc's sampler frames are) is
// not listed at all.
TEST(CountUnnamedFramesTest, AStackCountsOncePerFileAndUnshownFramesNotAtAll) {
  Aggregation aggregation = MakeAggregation();
  aggregation.stacks = {{{1, 3, 0}, 50}, {{0}, 50}};
  const analysis::UnnamedFrameShares shares = analysis::CountUnnamedFrames(aggregation);
  EXPECT_DOUBLE_EQ(shares.named_share, 0.5);
  ASSERT_EQ(shares.by_module.size(), 1u);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libfoo.so.1").share, 0.5);
  EXPECT_EQ(shares.by_module.at("libfoo.so.1").addresses, 2u);
  EXPECT_EQ(shares.by_module.count("libbar.so"), 0u);
}

// Every stack named: nothing to warn about, whatever the unshown locations hold.
TEST(CountUnnamedFramesTest, OnlyNamedStacksListNoFile) {
  Aggregation aggregation = MakeAggregation();
  aggregation.stacks = {{{0}, 80}};
  const analysis::UnnamedFrameShares shares = analysis::CountUnnamedFrames(aggregation);
  EXPECT_DOUBLE_EQ(shares.named_share, 1.0);
  EXPECT_TRUE(shares.by_module.empty());
}

TEST_F(SymbolizationReportTest, ModulesByShareWithTheirDebugPackage) {
  const analysis::SymbolizationSummary summary = Summarize();
  ASSERT_EQ(summary.modules.size(), 2u);
  EXPECT_EQ(summary.modules[0].path, kLibFoo);
  EXPECT_EQ(summary.modules[0].build_id, "abcdef0123");
  EXPECT_EQ(summary.modules[0].package, "libfoo1");
  EXPECT_EQ(summary.modules[0].debug_package, "libfoo1-dbgsym");
  EXPECT_EQ(summary.modules[1].path, kLibBar);
  EXPECT_EQ(summary.modules[1].package, "");
  EXPECT_NE(summary.modules[1].problem, "");
}

// The report looks the packages up ahead, on another thread: the summary
// takes that answer (here the lists are gone by the time it is made).
TEST_F(SymbolizationReportTest, PackagesLookedUpAheadAreTheOnesUsed) {
  context_.owners = PrefetchPackageOwners(Modules(), dir_.path());
  context_.owners.wait();
  std::filesystem::remove(dir_.File("libfoo1:amd64.list"));
  const analysis::SymbolizationSummary summary = Summarize();
  ASSERT_EQ(summary.modules.size(), 2u);
  EXPECT_EQ(summary.modules[0].package, "libfoo1");
  EXPECT_EQ(summary.modules[0].debug_package, "libfoo1-dbgsym");
  EXPECT_EQ(summary.modules[1].package, "");
}

TEST_F(SymbolizationReportTest, StderrSummaryNamesFilesSharesAndFixes) {
  const std::string text = analysis::FormatSymbolizationSummary(Summarize());
  EXPECT_NE(text.find("40.0% of the profile is in stacks with frames no symbol names"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(std::string(kLibFoo) + " (build ID abcdef0123): 40.0% of the profile, 2 "
                                             "unnamed frames; exported symbols only"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cannot open /opt/bar/libbar.so"), std::string::npos) << text;
  EXPECT_NE(text.find("apt-get install libfoo1-dbgsym"), std::string::npos) << text;
  EXPECT_NE(text.find("DEBUGINFOD_URLS="), std::string::npos) << text;
  EXPECT_NE(text.find("--sysroot"), std::string::npos) << text;
}

TEST_F(SymbolizationReportTest, NoHintsForWhatTheUserAlreadyDid) {
  context_.debuginfod = true;
  context_.sysroot = dir_.path();
  const analysis::SymbolizationSummary summary = Summarize();
  EXPECT_EQ(summary.modules[0].debug_package, "") << "dpkg of this host says nothing of a sysroot";
  const std::string text = analysis::FormatSymbolizationSummary(summary);
  EXPECT_EQ(text.find("DEBUGINFOD_URLS="), std::string::npos) << text;
  EXPECT_EQ(text.find("--sysroot DIR"), std::string::npos) << text;
}

TEST_F(SymbolizationReportTest, NothingSaidAndNothingAskedWhenEveryFrameHasAName) {
  Aggregation aggregation = MakeAggregation();
  aggregation.stacks = {{{0}, 60}};
  aggregation.locations.resize(1);
  bool asked = false;
  const analysis::SymbolizationSummary summary = SummarizeSymbolization(
      aggregation, [&] { asked = true; return Modules(); }, context_);
  EXPECT_TRUE(summary.complete());
  EXPECT_FALSE(asked) << "module facts may read debug files (or download them): only when needed";
  EXPECT_EQ(analysis::FormatSymbolizationSummary(summary), "");
}

TEST_F(SymbolizationReportTest, JsonCarriesTheSameFacts) {
  const analysis::SymbolizationSummary summary = Summarize();
  analysis::ReportOptions options;
  options.symbolization = &summary;
  std::ostringstream out;
  ASSERT_TRUE(analysis::JsonReportRenderer(options).Render(MakeAggregation(), out).has_value());
  const nlohmann::json report = nlohmann::json::parse(out.str());
  const nlohmann::json& symbolization = report.at("symbolization");
  EXPECT_EQ(symbolization.at("complete"), false);
  EXPECT_DOUBLE_EQ(symbolization.at("named_share").get<double>(), 0.6);
  EXPECT_EQ(symbolization.at("debug_packages"), nlohmann::json::array({"libfoo1-dbgsym"}));
  const nlohmann::json& foo = symbolization.at("modules").at(0);
  EXPECT_EQ(foo.at("path"), kLibFoo);
  EXPECT_EQ(foo.at("build_id"), "abcdef0123");
  EXPECT_DOUBLE_EQ(foo.at("share").get<double>(), 0.4);
  EXPECT_EQ(foo.at("symbols"), "exported");
  EXPECT_EQ(symbolization.at("modules").at(1).at("symbols"), "none");
  // Frames no symbol covers are named module+0xOFFSET in the stacks too.
  EXPECT_NE(out.str().find("\"libfoo.so.1+0x1a2b\""), std::string::npos);
}

TEST(PackagesOwningTest, WithoutDpkgNothingIsOwned) {
  EXPECT_TRUE(PackagesOwning({kLibFoo}, "/nonexistent/dpkg/info").empty());
}

// A profile with no samples (profiling inactive, or nothing sampled left):
// like jeprof, the report itself is empty; the note on stderr says why.
TEST(EmptyReportTest, NothingToShowIsSaidOnTheSide) {
  test_support::TempDir dir("memprof-empty-report");
  const std::string dump = dir.path() + "/empty.heap";
  std::ofstream(dump) << "heap_v2/524288\n  t*: 0: 0 [0: 0]\n  t0: 0: 0 [0: 0]\n\n"
                         "MAPPED_LIBRARIES:\n";
  ReportRequest request;
  request.dump_path = dump;
  std::ostringstream out;
  analysis::SymbolizationSummary summary;
  ASSERT_TRUE(RunReportPipeline(request, out, &summary));
  EXPECT_EQ(out.str(), "");
  EXPECT_TRUE(summary.empty);
  const std::string note = analysis::FormatSymbolizationSummary(summary);
  EXPECT_NE(note.find("nothing to show: the profile holds no samples"), std::string::npos) << note;
  request.base_path = dump;
  analysis::SymbolizationSummary diff;
  ASSERT_TRUE(RunReportPipeline(request, out, &diff));
  EXPECT_NE(analysis::FormatSymbolizationSummary(diff).find("the profiles do not differ"),
            std::string::npos);
}

}  // namespace
}  // namespace memprof::report
