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

using report::aggregate::Aggregation;
using report::aggregate::Frame;

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

std::vector<report::symbolize::ModuleReport> Modules() {
  report::symbolize::ModuleReport foo;
  foo.path = kLibFoo;
  foo.build_id = "abcdef0123";
  report::symbolize::ModuleReport bar;
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
  report::aggregate::SymbolizationSummary Summarize() {
    return SummarizeSymbolization(MakeAggregation(), Modules, context_);
  }

  test_support::TempDir dir_;
  SummaryContext context_;
};

TEST(UnnamedFrameNameTest, ModuleAndFileOffsetElseTheAddress) {
  EXPECT_EQ(report::aggregate::UnnamedFrameName(Unnamed("libx.so", 0x1a2b), 0x7f0000001a2b),
            "libx.so+0x1a2b");
  EXPECT_EQ(report::aggregate::UnnamedFrameName(Unnamed("", 0), 0x7f0000001a2b), "0x7f0000001a2b");
}

TEST(CountUnnamedFramesTest, SharesOfTheStacksAbsoluteValues) {
  const report::aggregate::UnnamedFrameShares shares =
      report::aggregate::CountUnnamedFrames(MakeAggregation());
  EXPECT_DOUBLE_EQ(shares.named_share, 0.6);
  ASSERT_EQ(shares.by_module.size(), 2u);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libfoo.so.1").share, 0.4);
  EXPECT_EQ(shares.by_module.at("libfoo.so.1").addresses, 2u);  // the guess counts
  EXPECT_DOUBLE_EQ(shares.by_module.at("libbar.so").share, 0.1);
  EXPECT_EQ(shares.by_module.at("libbar.so").addresses, 1u);
}

// What the unnamed frames hide: the allocating site (40: libfoo's frame and
// its guess are the leaves of two stacks), and libbar's frame between the
// guessed site and main (10).
TEST(CountUnnamedFramesTest, WhatTheyHideIsTheSiteOrACallBetweenNamedOnes) {
  const report::aggregate::UnnamedFrameShares shares =
      report::aggregate::CountUnnamedFrames(MakeAggregation());
  EXPECT_DOUBLE_EQ(shares.unnamed_site_share, 0.4);
  EXPECT_DOUBLE_EQ(shares.cut_short_share, 0.1);
  EXPECT_DOUBLE_EQ(shares.hidden_share, 0.4);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libfoo.so.1").hidden_share, 0.4);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libbar.so").hidden_share, 0.1);
}

// A threaded program's stacks end in libc's and libstdc++'s thread entry
// points, which have no names without their debug packages: beyond the
// outermost named frame, they hide nothing.
Aggregation ThreadedAggregation() {
  Aggregation aggregation;
  aggregation.locations = {{0x1000, {Named("SessionRegistry::LeakSession", "demo")}, {}},
                           {0x1100, {Named("Worker", "demo")}, {}},
                           {0x2000, {Unnamed("libstdc++.so.6", 0xd44a3)}, {}},
                           {0x3000, {Unnamed("libc.so.6", 0x89134)}, {}},
                           {0x3100, {Unnamed("libc.so.6", 0x1097dc)}, {}},
                           {0x1200, {Named("main", "demo")}, {}},
                           {0x3200, {Named("start_thread", "libc.so.6")}, {}},
                           {0x3300, {Named("__clone3", "libc.so.6")}, {}}};
  // Where libc has a symbol table, its entry points are named: the
  // trampoline is then between named frames, and still hides nothing.
  aggregation.stacks = {{{0, 1, 2, 3, 4}, 60}, {{0, 1, 2, 6, 7}, 30}, {{0, 5}, 10}};
  aggregation.total = aggregation.shown_total = 100;
  return aggregation;
}

TEST(CountUnnamedFramesTest, ThreadEntryPointsBeyondTheOutermostNamedFrameHideNothing) {
  const report::aggregate::UnnamedFrameShares shares =
      report::aggregate::CountUnnamedFrames(ThreadedAggregation());
  EXPECT_DOUBLE_EQ(shares.named_share, 0.1);
  EXPECT_DOUBLE_EQ(shares.hidden_share, 0.0);
  EXPECT_DOUBLE_EQ(shares.unnamed_site_share, 0.0);
  EXPECT_DOUBLE_EQ(shares.cut_short_share, 0.0);
  ASSERT_EQ(shares.by_module.size(), 2u);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libc.so.6").share, 0.6);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libc.so.6").hidden_share, 0.0);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libstdc++.so.6").share, 0.9);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libstdc++.so.6").hidden_share, 0.0);
  EXPECT_EQ(shares.by_module.at("libc.so.6").addresses, 2u);
}

// Unnamed frames between named ones cut the stack short, however far out.
TEST(CountUnnamedFramesTest, AnUnnamedCallBetweenNamedOnesCutsTheStackShort) {
  Aggregation aggregation = ThreadedAggregation();
  aggregation.stacks = {{{0, 2, 1, 3}, 30}, {{3, 4}, 70}};
  const report::aggregate::UnnamedFrameShares shares =
      report::aggregate::CountUnnamedFrames(aggregation);
  EXPECT_DOUBLE_EQ(shares.cut_short_share, 0.3);
  EXPECT_DOUBLE_EQ(shares.unnamed_site_share, 0.7) << "a stack with no name at all: its site";
  EXPECT_DOUBLE_EQ(shares.hidden_share, 1.0);
  EXPECT_DOUBLE_EQ(shares.by_module.at("libstdc++.so.6").hidden_share, 0.3);
  // libc's frame beyond Worker hides nothing in the first stack; in the
  // second it is the site (and its caller lies beyond no named frame).
  EXPECT_DOUBLE_EQ(shares.by_module.at("libc.so.6").hidden_share, 0.7);
}

// Two unnamed frames of one file in a stack count that stack once; a file
// whose frames no stack shows (cut away, as tcmalloc's sampler frames are) is
// not listed at all.
TEST(CountUnnamedFramesTest, AStackCountsOncePerFileAndUnshownFramesNotAtAll) {
  Aggregation aggregation = MakeAggregation();
  aggregation.stacks = {{{1, 3, 0}, 50}, {{0}, 50}};
  const report::aggregate::UnnamedFrameShares shares =
      report::aggregate::CountUnnamedFrames(aggregation);
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
  const report::aggregate::UnnamedFrameShares shares =
      report::aggregate::CountUnnamedFrames(aggregation);
  EXPECT_DOUBLE_EQ(shares.named_share, 1.0);
  EXPECT_TRUE(shares.by_module.empty());
}

TEST_F(SymbolizationReportTest, ModulesByShareWithTheirDebugPackage) {
  const report::aggregate::SymbolizationSummary summary = Summarize();
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
  const report::aggregate::SymbolizationSummary summary = Summarize();
  ASSERT_EQ(summary.modules.size(), 2u);
  EXPECT_EQ(summary.modules[0].package, "libfoo1");
  EXPECT_EQ(summary.modules[0].debug_package, "libfoo1-dbgsym");
  EXPECT_EQ(summary.modules[1].package, "");
}

TEST_F(SymbolizationReportTest, StderrSummaryNamesFilesSharesAndFixes) {
  const std::string text = report::aggregate::FormatSymbolizationSummary(Summarize());
  EXPECT_NE(text.find("40.0% of the profile is allocated at or called through frames no symbol "
                      "names (40.0% at an unnamed allocating site, 10.0% with an unnamed call "
                      "between named ones)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(std::string(kLibFoo) + " (build ID abcdef0123): hides 40.0% of the profile "
                                             "(40.0% in stacks with its frames), 2 unnamed "
                                             "frames; exported symbols only"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(std::string(kLibBar) + ": hides 10.0% of the profile"), std::string::npos)
      << text;
  EXPECT_NE(text.find("cannot open /opt/bar/libbar.so"), std::string::npos) << text;
  EXPECT_NE(text.find("apt-get install libfoo1-dbgsym"), std::string::npos) << text;
  EXPECT_NE(text.find("DEBUGINFOD_URLS="), std::string::npos) << text;
  EXPECT_NE(text.find("--sysroot"), std::string::npos) << text;
}

// The demo's case: every frame that matters has a name. No hint, no line;
// -v still lists the files and the fix.
TEST_F(SymbolizationReportTest, NamedThreadsWhoseEntryPointsHaveNoNamesGetNoHint) {
  const report::aggregate::SymbolizationSummary summary =
      SummarizeSymbolization(ThreadedAggregation(), Modules, context_);
  EXPECT_FALSE(summary.complete());
  EXPECT_EQ(report::aggregate::FormatSymbolizationSummary(summary), "");
  const std::string verbose =
      report::aggregate::FormatSymbolizationSummary(summary, /*verbose=*/true);
  EXPECT_NE(verbose.find("no frame without a name hides anything"), std::string::npos) << verbose;
  EXPECT_NE(verbose.find("libstdc++.so.6: hides 0.0% of the profile (90.0% in stacks with its frames)"),
            std::string::npos)
      << verbose;
  EXPECT_NE(verbose.find("DEBUGINFOD_URLS="), std::string::npos) << verbose;
}

// Under the threshold: one line that says how to see more.
TEST_F(SymbolizationReportTest, LittleHiddenIsOneLine) {
  Aggregation aggregation = ThreadedAggregation();
  aggregation.stacks.push_back({{2, 0}, 3});  // an unnamed site: 3 of 103
  const report::aggregate::SymbolizationSummary summary =
      SummarizeSymbolization(aggregation, Modules, context_);
  EXPECT_EQ(report::aggregate::FormatSymbolizationSummary(summary),
            "memprofctl: 2.9% of the profile is allocated at or called through frames no symbol "
            "names (under 5.0%: -v lists the files and how to name them)\n");
  aggregation.stacks.back().value = 6;  // 6 of 106: worth the fix
  const std::string full = report::aggregate::FormatSymbolizationSummary(
      SummarizeSymbolization(aggregation, Modules, context_));
  EXPECT_NE(full.find("5.7% of the profile is allocated at or called through"), std::string::npos)
      << full;
  EXPECT_NE(full.find("libstdc++.so.6: hides 5.7%"), std::string::npos) << full;
  EXPECT_EQ(full.find("libc.so.6"), std::string::npos) << "libc hides nothing here:\n" << full;
}

TEST_F(SymbolizationReportTest, NoHintsForWhatTheUserAlreadyDid) {
  context_.debuginfod = true;
  context_.sysroot = dir_.path();
  const report::aggregate::SymbolizationSummary summary = Summarize();
  EXPECT_EQ(summary.modules[0].debug_package, "") << "dpkg of this host says nothing of a sysroot";
  const std::string text = report::aggregate::FormatSymbolizationSummary(summary);
  EXPECT_EQ(text.find("DEBUGINFOD_URLS="), std::string::npos) << text;
  EXPECT_EQ(text.find("--sysroot DIR"), std::string::npos) << text;
}

TEST_F(SymbolizationReportTest, NothingSaidAndNothingAskedWhenEveryFrameHasAName) {
  Aggregation aggregation = MakeAggregation();
  aggregation.stacks = {{{0}, 60}};
  aggregation.locations.resize(1);
  bool asked = false;
  const report::aggregate::SymbolizationSummary summary = SummarizeSymbolization(
      aggregation, [&] { asked = true; return Modules(); }, context_);
  EXPECT_TRUE(summary.complete());
  EXPECT_FALSE(asked) << "module facts may read debug files (or download them): only when needed";
  EXPECT_EQ(report::aggregate::FormatSymbolizationSummary(summary), "");
}

TEST_F(SymbolizationReportTest, JsonCarriesTheSameFacts) {
  const report::aggregate::SymbolizationSummary summary = Summarize();
  report::render::ReportOptions options;
  options.symbolization = &summary;
  std::ostringstream out;
  ASSERT_TRUE(
      report::render::JsonReportRenderer(options).Render(MakeAggregation(), out).has_value());
  const nlohmann::json report = nlohmann::json::parse(out.str());
  const nlohmann::json& symbolization = report.at("symbolization");
  EXPECT_EQ(symbolization.at("complete"), false);
  EXPECT_DOUBLE_EQ(symbolization.at("named_share").get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(symbolization.at("hidden_share").get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(symbolization.at("unnamed_site_share").get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(symbolization.at("cut_short_share").get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(symbolization.at("hint_share").get<double>(), 0.05);
  EXPECT_EQ(symbolization.at("debug_packages"), nlohmann::json::array({"libfoo1-dbgsym"}));
  const nlohmann::json& foo = symbolization.at("modules").at(0);
  EXPECT_EQ(foo.at("path"), kLibFoo);
  EXPECT_EQ(foo.at("build_id"), "abcdef0123");
  EXPECT_DOUBLE_EQ(foo.at("share").get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(foo.at("hidden_share").get<double>(), 0.4);
  EXPECT_EQ(foo.at("symbols"), "exported");
  EXPECT_EQ(symbolization.at("modules").at(1).at("symbols"), "none");
  // Frames no symbol covers are named module+0xOFFSET in the stacks too.
  EXPECT_NE(out.str().find("\"libfoo.so.1+0x1a2b\""), std::string::npos);
}

// The report of a dump made of `text`, in `format`, and what it says on the side.
struct PipelineRun {
  std::string out;
  report::aggregate::SymbolizationSummary summary;
};
PipelineRun RunOnDumpText(const std::string& text, Format format = Format::kText,
                          const std::string& base_text = "") {
  test_support::TempDir dir("memprof-report-run");
  ReportRequest request;
  request.dump_path = dir.path() + "/profile.heap";
  std::ofstream(request.dump_path) << text;
  if (!base_text.empty()) {
    request.base_path = dir.path() + "/base.heap";
    std::ofstream(request.base_path) << base_text;
  }
  request.format = format;
  std::ostringstream out;
  PipelineRun run;
  const Result<void> done = RunReportPipeline(request, out, &run.summary);
  EXPECT_TRUE(done) << done.error().message;
  run.out = out.str();
  return run;
}

constexpr char kSamplerDump[] =
    "heap_v2/524288\n# memprof_sampler since_unix_ms=1764648000000 dropped=3\n"
    "  t*: 1: 1024 [0: 0]\n@ 0x1010\n  t*: 1: 1024 [0: 0]\n\n"
    "MAPPED_LIBRARIES:\n1000-2000 r-xp 00000000 08:02 1 /nonexistent/app\n";
constexpr char kAllocatorDump[] =
    "heap_v2/524288\n  t*: 1: 1024 [0: 0]\n@ 0x1010\n  t*: 1: 1024 [0: 0]\n\n"
    "MAPPED_LIBRARIES:\n1000-2000 r-xp 00000000 08:02 1 /nonexistent/app\n";

// A dump of memprof's own sampler: the report says what it covers, on
// stderr and in the JSON, and a plain dump says that its allocator sampled it.
TEST(SamplerCoverageTest, TheReportSaysWhatTheSamplersProfileCovers) {
  EXPECT_EQ(report::aggregate::FormatSymbolizationSummary(RunOnDumpText(kSamplerDump).summary)
                .substr(0, 160),
            "memprofctl: sampled by memprof since 2025-12-02 04:00:00 UTC; allocations made "
            "before are not in it; 3 sampled allocations did not fit the agent's tables and ar");
  const nlohmann::json coverage =
      nlohmann::json::parse(RunOnDumpText(kSamplerDump, Format::kJson).out).at("coverage");
  EXPECT_EQ(coverage.at("sampled_by"), "memprof");
  EXPECT_EQ(coverage.at("since_unix_ms"), 1764648000000);
  EXPECT_EQ(coverage.at("dropped"), 3);

  const PipelineRun plain = RunOnDumpText(kAllocatorDump, Format::kJson);
  EXPECT_EQ(nlohmann::json::parse(plain.out).at("coverage").at("sampled_by"), "allocator");
  EXPECT_EQ(report::aggregate::FormatSymbolizationSummary(plain.summary).find("sampled by memprof"),
            std::string::npos);
}

TEST(PackagesOwningTest, WithoutDpkgNothingIsOwned) {
  EXPECT_TRUE(PackagesOwning({kLibFoo}, "/nonexistent/dpkg/info").empty());
}

// A profile with no samples (profiling inactive, or nothing sampled left):
// like jeprof, the report itself is empty; the note on stderr says why.
TEST(EmptyReportTest, NothingToShowIsSaidOnTheSide) {
  const std::string empty =
      "heap_v2/524288\n  t*: 0: 0 [0: 0]\n  t0: 0: 0 [0: 0]\n\nMAPPED_LIBRARIES:\n";
  const PipelineRun run = RunOnDumpText(empty);
  EXPECT_EQ(run.out, "");
  EXPECT_TRUE(run.summary.empty);
  const std::string note = report::aggregate::FormatSymbolizationSummary(run.summary);
  EXPECT_NE(note.find("nothing to show: the profile holds no samples"), std::string::npos) << note;
  const PipelineRun diff = RunOnDumpText(empty, Format::kText, empty);
  EXPECT_NE(report::aggregate::FormatSymbolizationSummary(diff.summary)
                .find("the profiles do not differ"),
            std::string::npos);
}

}  // namespace
}  // namespace memprof::report
