// `memprofctl report` on real gperftools heap profiles: the
// testprog gperf_profile_writer, linked with Debian's libtcmalloc, allocates
// known amounts in named functions and writes the heap profiler's profile
// (GetHeapProfile, "@ heapprofile", exact) and tcmalloc's sampled one
// (GetHeapSample with TCMALLOC_SAMPLE_PARAMETER, "@ heap_v2/65536"). Every
// output format must name those functions with the known amounts, and the
// totals must be what the real pprof reads from the same files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"

namespace memprof::integration {
namespace {

constexpr const char* kWriter = MEMPROF_IT_GPERF_WRITER;
constexpr const char* kSamplePeriod = "65536";
// What gperf_profile_writer.cc allocates and keeps, and what it frees again.
constexpr double kBigBytes = 64.0 * 1024 * 1024;    // GperfWriterAllocBig, 64 objects
constexpr double kSmallBytes = 16.0 * 1024 * 1024;  // GperfWriterAllocSmall, 4096 objects
constexpr double kChurnBytes = 1000.0 * 1000;       // GperfWriterChurn, 1000 objects, freed

class GperftoolsReportTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    const std::string prefix = dir().File("writer");
    CommandResult r = RunCommand({kWriter, prefix}, {{"TCMALLOC_SAMPLE_PARAMETER", kSamplePeriod}});
    ASSERT_EQ(r.exit_code, 0) << r;
    exact_ = prefix + ".heapprofile";
    sampled_ = prefix + ".heapsample";
  }

  nlohmann::json ReportJson(const std::string& profile, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"report", profile, "--format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  // The real pprof on the legacy profile (with the writer for symbols) or
  // on our pprof output: "-top -unit=B".
  CommandResult Pprof(std::vector<std::string> args) {
    std::string pprof;
    EXPECT_TRUE(test_support::CanRun(test_support::Pprof(MEMPROF_IT_PPROF_TOOL), &pprof));
    args.insert(args.begin(), pprof);
    CommandResult r = RunCommand(args, {});
    EXPECT_EQ(r.exit_code, 0) << r;
    return r;
  }

  std::string exact_;
  std::string sampled_;
};

double Flat(const nlohmann::json& report, const std::string& function) {
  if (!report.is_object()) return -1;
  for (const auto& row : report["functions"]) {
    if (row["name"] == function) return row["flat"].get<double>();
  }
  return -1;
}

// "of 16777216B total" and a function's flat bytes in pprof -top -unit=B.
double PprofTotal(const std::string& top) {
  std::smatch m;
  if (!std::regex_search(top, m, std::regex("of ([0-9.]+)B total"))) return -1;
  return std::stod(m[1].str());
}

double PprofFlat(const std::string& top, const std::string& function) {
  std::smatch m;
  if (!std::regex_search(top, m, std::regex("\n *([0-9.]+)B .* " + function + "\n"))) return -1;
  return std::stod(m[1].str());
}

// Lines of the profile that hold a stack: pprof truncates each one's
// unsampled values to an integer, so its totals may be that many lower.
double StackLines(const std::string& path) {
  const std::string text = ReadFile(path);
  return static_cast<double>(std::count(text.begin(), text.end(), '@') - 1);
}

TEST_F(GperftoolsReportTest, TheHeapProfilersCountsAreReportedExactly) {
  nlohmann::json inuse = ReportJson(exact_);
  EXPECT_EQ(Flat(inuse, "GperfWriterAllocBig"), kBigBytes) << inuse.dump(1);
  EXPECT_EQ(Flat(inuse, "GperfWriterAllocSmall"), kSmallBytes);
  EXPECT_EQ(Flat(inuse, "GperfWriterChurn"), -1) << "freed memory is not in use";
  nlohmann::json objects = ReportJson(exact_, {"--inuse-objects"});
  EXPECT_EQ(Flat(objects, "GperfWriterAllocBig"), 64);
  EXPECT_EQ(Flat(objects, "GperfWriterAllocSmall"), 4096);
  nlohmann::json alloc = ReportJson(exact_, {"--alloc-space"});
  EXPECT_EQ(Flat(alloc, "GperfWriterChurn"), kChurnBytes);
  EXPECT_EQ(Flat(alloc, "GperfWriterAllocBig"), kBigBytes);
  EXPECT_EQ(Flat(ReportJson(exact_, {"--alloc-objects"}), "GperfWriterChurn"), 1000);
}

TEST_F(GperftoolsReportTest, TheHeapProfilersTotalsAreWhatPprofReads) {
  const std::string top = Pprof({"-top", "-unit=B", kWriter, exact_}).out;
  nlohmann::json inuse = ReportJson(exact_);
  ASSERT_TRUE(inuse.is_object());
  EXPECT_EQ(inuse["total"].get<double>(), PprofTotal(top)) << top;
  EXPECT_EQ(PprofFlat(top, "GperfWriterAllocBig"), kBigBytes) << top;
  const std::string alloc_top =
      Pprof({"-top", "-unit=B", "-sample_index=alloc_space", kWriter, exact_}).out;
  EXPECT_EQ(ReportJson(exact_, {"--alloc-space"})["total"].get<double>(), PprofTotal(alloc_top))
      << alloc_top;
  EXPECT_EQ(PprofFlat(alloc_top, "GperfWriterChurn"), kChurnBytes) << alloc_top;
}

// The sampler's counts are estimates: close to what was allocated, and
// what pprof estimates from the same file (pprof truncates each line's
// estimate, we do not: at most a byte per line apart).
TEST_F(GperftoolsReportTest, TheSamplersEstimatesAreWhatPprofReads) {
  nlohmann::json report = ReportJson(sampled_);
  ASSERT_TRUE(report.is_object());
  const double big = Flat(report, "GperfWriterAllocBig");
  const double small = Flat(report, "GperfWriterAllocSmall");
  EXPECT_GT(big, kBigBytes * 0.5) << report.dump(1);
  EXPECT_LT(big, kBigBytes * 1.5);
  EXPECT_GT(small, kSmallBytes * 0.5);
  EXPECT_LT(small, kSmallBytes * 1.5);
  const std::string top = Pprof({"-top", "-unit=B", kWriter, sampled_}).out;
  const double lines = StackLines(sampled_);
  EXPECT_NEAR(report["total"].get<double>(), PprofTotal(top), lines) << top;
  EXPECT_NEAR(big, PprofFlat(top, "GperfWriterAllocBig"), lines) << top;
  EXPECT_NEAR(small, PprofFlat(top, "GperfWriterAllocSmall"), lines) << top;
}

// Our pprof output of each profile, read back by the real pprof: the same
// total, the sampler's period, and accumulated values only where the
// profile has them.
TEST_F(GperftoolsReportTest, OurPprofOutputCarriesThePeriodAndTheTotals) {
  for (const std::string& profile : {exact_, sampled_}) {
    const std::string out = profile + ".pb.gz";
    CommandResult r = Cli({"report", profile, "--format", "pprof", "--out", out});
    ASSERT_EQ(r.exit_code, 0) << r;
    const std::string top = Pprof({"-top", "-unit=B", out}).out;
    EXPECT_NEAR(ReportJson(profile)["total"].get<double>(), PprofTotal(top), StackLines(profile))
        << top;
    const std::string raw = Pprof({"-raw", out}).out;
    const bool sampled = profile == sampled_;
    EXPECT_NE(raw.find(sampled ? "Period: 65536" : "Period: 1\n"), std::string::npos) << raw;
    EXPECT_EQ(raw.find("alloc_space/bytes") != std::string::npos, !sampled) << raw;
    EXPECT_NE(raw.find("inuse_space/bytes"), std::string::npos) << raw;
  }
}

TEST_F(GperftoolsReportTest, TextCollapsedAndSvgNameTheFunctions) {
  for (const std::string& profile : {exact_, sampled_}) {
    CommandResult text = Cli({"report", profile});
    ASSERT_EQ(text.exit_code, 0) << text;
    EXPECT_TRUE(text.out.starts_with("Total:")) << text.out;
    EXPECT_NE(text.out.find("GperfWriterAllocBig"), std::string::npos) << text.out;
    CommandResult collapsed = Cli({"report", profile, "--format", "collapsed"});
    ASSERT_EQ(collapsed.exit_code, 0) << collapsed;
    EXPECT_NE(collapsed.out.find(";main;GperfWriterAllocSmall "), std::string::npos)
        << collapsed.out;
    const std::string svg = dir().File("flame.svg");  // once per profile: --force
    CommandResult flame = Cli({"report", profile, "--format", "svg", "--out", svg, "--force"});
    ASSERT_EQ(flame.exit_code, 0) << flame;
    EXPECT_NE(ReadFile(svg).find("GperfWriterAllocBig"), std::string::npos);
  }
  // The heap profiler's exact bytes, to the byte.
  CommandResult collapsed = Cli({"report", exact_, "--format", "collapsed"});
  EXPECT_NE(collapsed.out.find(";main;GperfWriterAllocBig 67108864\n"), std::string::npos)
      << collapsed.out;
}

// The json report of each kind, plain and as a --base diff, follows the
// report schema (docs/schemas, checked by tests/schemas/validate_json.py).
TEST_F(GperftoolsReportTest, JsonReportsFollowTheSchema) {
  for (const std::string& profile : {exact_, sampled_}) {
    for (const std::vector<std::string>& more :
         {std::vector<std::string>{}, std::vector<std::string>{"--base", profile}}) {
      // Each report replaces the one before (--force).
      std::vector<std::string> args = {"report", profile, "--format", "json", "--out",
                                       profile + ".json", "--force"};
      args.insert(args.end(), more.begin(), more.end());
      CommandResult r = Cli(args);
      ASSERT_EQ(r.exit_code, 0) << r;
      CommandResult valid = RunCommand({MEMPROF_IT_PYTHON3, MEMPROF_IT_JSON_VALIDATOR,
                                        MEMPROF_IT_REPORT_SCHEMA, profile + ".json"},
                                       {});
      EXPECT_EQ(valid.exit_code, 0) << valid;
    }
  }
}

// --base and merging work across gperftools profiles like across dumps.
TEST_F(GperftoolsReportTest, BaseAndMergeReadGperftoolsProfiles) {
  nlohmann::json diff = ReportJson(exact_, {"--base", exact_});
  ASSERT_TRUE(diff.is_object());
  EXPECT_EQ(diff["total"].get<double>(), 0);
  EXPECT_EQ(diff["diff"], true);
  nlohmann::json sum = ReportJson(exact_, {exact_});
  EXPECT_EQ(Flat(sum, "GperfWriterAllocBig"), 2 * kBigBytes) << sum.dump(1);
}

TEST_F(GperftoolsReportTest, AnUnknownFormatNamesBothFormatsWeRead) {
  const std::string bad = dir().File("cpu.prof");
  ASSERT_TRUE(WriteFile(bad, "--- contentionz 1 ---\n"));
  ExpectCliError(Cli({"report", bad}), 2,
                 "cpu.prof:1: not a heap profile: expected jemalloc's 'heap_v2/<sample period>' or "
                 "gperftools' 'heap profile: ...' header, got '--- contentionz 1 ---'");
  const std::string cut = dir().File("cut.prof");
  const std::string text = ReadFile(exact_);
  ASSERT_TRUE(WriteFile(cut, text.substr(0, text.find("MAPPED_LIBRARIES:"))));
  ExpectCliError(Cli({"report", cut}), 2,
                 "input ends without the MAPPED_LIBRARIES section: truncated at byte " +
                     std::to_string(text.find("MAPPED_LIBRARIES:")));
}

}  // namespace
}  // namespace memprof::integration
