#include "cli/report/allocation_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cli/report/report_pipeline.h"
#include "tests/support/temp_dir.h"

namespace memprof::report {
namespace {

// Two allocation sites in a binary that is not there (named app+0xOFFSET):
// at 0x401010 4 KiB allocated and freed, at 0x401040 112 B that survive.
constexpr const char* kProfile =
    "memprof allocation profile v1\n"
    "pid: 4242\n"
    "created_unix_ms: 1700000001000\n"
    "window_start_unix_ms: 1700000000000\n"
    "window_requested_ms: 1000\n"
    "window_start_ns: 1000000000\n"
    "window_end_ns: 2000000000\n"
    "clock: realtime\n"
    "clock_resolution_ns: 1\n"
    "sample_interval: 1024\n"
    "record_bound: 100\n"
    "--- recent allocations\n"
    R"({"sample_interval":1024,"recent_alloc_max":100,"recent_alloc":[)"
    R"({"size":4096,"usize":4096,"released":true,"alloc_thread_uid":0,"alloc_time":1100000000,)"
    R"("alloc_trace":["0x401010","0x401020"],"dalloc_thread_uid":0,"dalloc_time":1100500000,)"
    R"("dalloc_trace":["0x401030"]},)"
    R"({"size":100,"usize":112,"released":false,"alloc_thread_uid":3,"alloc_time":1200000000,)"
    R"("alloc_trace":["0x401040","0x401020"]}]})"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "00400000-00402000 r-xp 00000000 08:01 1234 /nonexistent/app\n"
    "--- end\n";

class AllocationReportTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_.File(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  Result<std::string> Run(ReportRequest request) {
    if (request.dump_path.empty()) request.dump_path = Write("allocs.prof", kProfile);
    std::ostringstream out;
    auto ok = RunReportPipeline(request, out);
    if (!ok) return Fail(ok.error());
    return out.str();
  }

  test_support::TempDir dir_;
};

// The first function row of a text report (the line after the headings).
std::string FirstRow(const std::string& text) {
  const size_t headings = text.find(" function\n");
  if (headings == std::string::npos) return "";
  const size_t start = headings + 10;
  return text.substr(start, text.find('\n', start) - start);
}

TEST_F(AllocationReportTest, RanksByBytesAllocatedByDefault) {
  auto text = Run({});
  ASSERT_TRUE(text.has_value()) << text.error().message;
  EXPECT_EQ(text->rfind("Allocation profile of pid 4242: window 1.00 s", 0), 0u) << *text;
  EXPECT_NE(FirstRow(*text).find("app+0x1010"), std::string::npos) << *text;
}

TEST_F(AllocationReportTest, InuseSpaceShowsTheSurvivors) {
  ReportRequest request;
  request.metric = report::Metric::kInuseSpace;
  request.metric_chosen = true;
  request.show_bytes = true;
  auto text = Run(request);
  ASSERT_TRUE(text.has_value()) << text.error().message;
  // 112 B at interval 1024: 112 / (1 - e^-(112/1024)) = 1081.02 B.
  EXPECT_NE(text->find("Total: 1081 B\n"), std::string::npos) << *text;
  EXPECT_NE(FirstRow(*text).find("app+0x1040"), std::string::npos) << *text;
}

TEST_F(AllocationReportTest, LifetimesJsonNamesSitesAsTheTextReportDoes) {
  ReportRequest request;
  request.lifetimes = true;
  request.format = Format::kJson;
  auto text = Run(request);
  ASSERT_TRUE(text.has_value()) << text.error().message;
  EXPECT_NE(text->find("\"function\": \"app+0x1010\""), std::string::npos) << *text;
  EXPECT_NE(text->find("\"lifetime_p50_ns\": 500000"), std::string::npos) << *text;
}

TEST_F(AllocationReportTest, LifetimesOfAHeapDumpIsRefused) {
  ReportRequest request;
  request.lifetimes = true;
  request.dump_path = Write("dump.heap", "heap_v2/524288\n  t*: 0: 0 [0: 0]\nMAPPED_LIBRARIES:\n");
  auto text = Run(request);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(text.error().message.find("--lifetimes needs an allocation profile"),
            std::string::npos) << text.error().message;
}

TEST_F(AllocationReportTest, ABaseIsRefused) {
  ReportRequest request;
  request.base_path = Write("base.prof", kProfile);
  auto text = Run(request);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(text.error().message.find("cannot be summed with other profiles or compared with "
                                      "--base"),
            std::string::npos) << text.error().message;
}

TEST_F(AllocationReportTest, ACutProfileYieldsNoReport) {
  ReportRequest request;
  std::string cut = kProfile;
  cut.resize(cut.size() - 8);  // without "--- end\n"
  request.dump_path = Write("cut.prof", cut);
  auto text = Run(request);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(text.error().message.find("input ends without the final '--- end' line: truncated at"),
            std::string::npos) << text.error().message;
}

}  // namespace
}  // namespace memprof::report
