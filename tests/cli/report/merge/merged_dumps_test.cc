// Two real processes (two load addresses under ASLR) merged by the report
// pipeline: every function's value is the sum of its two values, and the
// pprof output is a profile the real pprof reads, with the summed total.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/report_pipeline.h"
#include "tests/cli/report/pprof/test_support.h"
#include "tests/support/debian_tools.h"
#include "tests/support/files.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::merge {
namespace {

using test_support::Quote;
using test_support::RunShell;

const std::string kPprof = MEMPROF_PPROF_TOOL;
const std::string kTarget = MEMPROF_MANY_STACKS_TARGET;

class MergedDumpsTest : public ::testing::Test {
 protected:
  // A dump of every allocation of one run of the target (its own process).
  std::string MakeDump(const std::string& name, const std::string& args) {
    std::string path = dir_.File(name);
    RunShell("MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 " + Quote(kTarget) + " " +
             args + " --once --self-dump " + Quote(path) + " 2>&1");
    return path;
  }

  std::string Report(report::ReportRequest request) {
    std::ostringstream out;
    auto result = report::RunReportPipeline(request, out);
    EXPECT_TRUE(result) << result.error().message;
    return out.str();
  }

  nlohmann::json Json(const std::string& dump, const std::string& more = "") {
    report::ReportRequest request;
    request.format = report::Format::kJson;
    request.dump_path = dump;
    if (!more.empty()) request.more_dump_paths = {more};
    return nlohmann::json::parse(Report(request));
  }

  // Per function name. Frames that cannot be named are shown by address,
  // the first dump's address in a merge, so they are summed as one bucket.
  static std::map<std::string, double> Flats(const nlohmann::json& json) {
    std::map<std::string, double> flats;
    for (const nlohmann::json& row : json["functions"]) {
      const std::string name = row["name"];
      flats[name.starts_with("0x") ? "<address>" : name] += row["flat"].get<double>();
    }
    return flats;
  }

  test_support::TempDir dir_{"memprof-merge"};
};

TEST_F(MergedDumpsTest, FunctionsOfTwoProcessesAddUp) {
  const std::string a = MakeDump("a.heap", "--stacks 50 --bytes 100");
  const std::string b = MakeDump("b.heap", "--stacks 80 --bytes 300");
  const nlohmann::json merged = Json(a, b);
  const nlohmann::json alone_a = Json(a);
  const nlohmann::json alone_b = Json(b);
  EXPECT_NEAR(merged["total"].get<double>(),
              alone_a["total"].get<double>() + alone_b["total"].get<double>(), 1e-6);
  std::map<std::string, double> sum = Flats(alone_a);
  for (const auto& [name, flat] : Flats(alone_b)) sum[name] += flat;
  const std::map<std::string, double> merged_flats = Flats(merged);
  EXPECT_EQ(merged_flats.size(), sum.size());  // nothing stayed apart by address
  for (const auto& [name, flat] : sum) {
    ASSERT_TRUE(merged_flats.contains(name)) << name;
    EXPECT_NEAR(merged_flats.at(name), flat, 1e-6) << name;
  }
  EXPECT_TRUE(merged_flats.contains("ManyStacksAllocate"));
}

// A dump that repeats a stack (one record merged into another's sample by
// Unsample): a single dump's stacks are interned as they are read, record
// by record, and the records merged away must leave that interning. The
// repeat in the middle of the dump reports as the same repeat at its end,
// in every format that aggregates.
TEST_F(MergedDumpsTest, ARepeatedStackReportsTheSameWhereverItIs) {
  const std::string text = test_support::ReadFile(MakeDump("a.heap", "--stacks 60 --bytes 100"));
  std::vector<size_t> records;  // where each '@' line starts
  for (size_t at = text.find("\n@"); at != std::string::npos; at = text.find("\n@", at + 1)) {
    records.push_back(at + 1);
  }
  ASSERT_GE(records.size(), 40u);
  const size_t end_of_records = text.find("\nMAPPED_LIBRARIES:");
  ASSERT_NE(end_of_records, std::string::npos);
  const std::string repeat = text.substr(records[5], records[6] - records[5]);  // '@' and counts
  const std::string in_middle = text.substr(0, records[30]) + repeat + text.substr(records[30]);
  // Before the blank line that ends the records.
  const size_t last_blank = text.rfind("\n\n", end_of_records) + 1;
  const std::string at_end = text.substr(0, last_blank) + repeat + text.substr(last_blank);
  ASSERT_TRUE(test_support::WriteFile(dir_.File("middle.heap"), in_middle));
  ASSERT_TRUE(test_support::WriteFile(dir_.File("end.heap"), at_end));
  for (const report::Format format :
       {report::Format::kText, report::Format::kCollapsed, report::Format::kJson}) {
    report::ReportRequest request;
    request.format = format;
    request.dump_path = dir_.File("middle.heap");
    const std::string middle_report = Report(request);
    request.dump_path = dir_.File("end.heap");
    EXPECT_EQ(middle_report, Report(request)) << static_cast<int>(format);
    EXPECT_FALSE(middle_report.empty());
  }
}

TEST_F(MergedDumpsTest, PprofReadsTheMergedProfile) {
  std::string pprof;
  ASSERT_TRUE(test_support::CanRun(test_support::Pprof(kPprof), &pprof));
  report::ReportRequest request;
  request.format = report::Format::kPprof;
  request.dump_path = MakeDump("a.heap", "--stacks 50 --bytes 100");
  request.more_dump_paths = {MakeDump("b.heap", "--stacks 80 --bytes 300")};
  const std::string path = dir_.File("merged.pb.gz");
  std::ofstream(path, std::ios::binary) << Report(request);
  const perftools::profiles::Profile ours =
      pprof::testing::DecodeProfile(test_support::ReadFile(path));
  int64_t inuse_bytes = 0;
  for (const auto& sample : ours.sample()) inuse_bytes += sample.value(1);
  const std::string top =
      RunShell("HOME=" + Quote(dir_.path()) + " " + Quote(pprof) +
               " -symbolize=none -top -unit=B -sample_index=inuse_space " + Quote(path) + " 2>&1");
  EXPECT_NE(top.find("of " + std::to_string(inuse_bytes) + "B total"), std::string::npos) << top;
  EXPECT_NE(top.find("ManyStacksAllocate()"), std::string::npos) << top;
}

}  // namespace
}  // namespace memprof::report::merge
