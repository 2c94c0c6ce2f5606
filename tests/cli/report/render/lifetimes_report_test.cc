#include "cli/report/render/lifetimes_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/render/allocation_header.h"
#include "cli/report/render/text_report.h"

namespace memprof::report::render {
namespace {

AllocationSummary Summary() {
  AllocationSummary summary;
  summary.header.pid = 77;
  summary.header.window_start_ns = 0;
  summary.header.window_end_ns = 2000000000;
  summary.header.window_requested_ms = 2000;
  summary.header.clock = "monotonic_coarse";
  summary.header.clock_resolution_ns = 4000000;
  summary.header.sample_interval = 524288;
  summary.header.ended_by = WindowEnd::kClient;
  summary.records = 12;
  summary.records_in_window = 10;
  summary.covered_ns = 2000000000;
  return summary;
}

std::vector<aggregate::LifetimeSite> Sites() {
  aggregate::LifetimeSite parse;
  parse.function = "Parse";
  parse.allocated = {3, 3 << 20};
  parse.freed = {2, 2 << 20};
  parse.survived = {1, 1 << 20};
  parse.allocation_rate = 1.5 * (1 << 20);
  parse.lifetime_p50_ns = 1000;
  parse.lifetime_p90_ns = 5000000;
  parse.lifetime_p99_ns = 7000000;
  aggregate::LifetimeSite cache;
  cache.function = "Cache";
  cache.allocated = {1, 1024};
  cache.survived = {1, 1024};
  return {parse, cache};
}

TEST(LifetimesReportTest, JsonHasTheHeaderAndEverySiteField) {
  std::ostringstream out;
  ASSERT_TRUE(WriteLifetimesJson(Summary(), Sites(), std::nullopt, out).has_value());
  const nlohmann::json json = nlohmann::json::parse(out.str());
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["allocation_profile"]["pid"], 77);
  EXPECT_EQ(json["allocation_profile"]["window_ns"], 2000000000);
  EXPECT_EQ(json["allocation_profile"]["ended_by"], "client");
  EXPECT_EQ(json["allocation_profile"]["records_in_window"], 10);
  EXPECT_EQ(json["allocation_profile"]["records_lost"], false);
  ASSERT_EQ(json["sites"].size(), 2u);
  const nlohmann::json& parse = json["sites"][0];
  EXPECT_EQ(parse["function"], "Parse");
  EXPECT_EQ(parse["allocated_bytes"], 3 << 20);
  EXPECT_EQ(parse["freed_bytes"], 2 << 20);
  EXPECT_EQ(parse["survived_bytes"], 1 << 20);
  EXPECT_EQ(parse["allocated_objects"], 3);
  EXPECT_EQ(parse["freed_objects"], 2);
  EXPECT_EQ(parse["survived_objects"], 1);
  EXPECT_EQ(parse["allocation_rate_bytes_per_second"], 1.5 * (1 << 20));
  EXPECT_EQ(parse["lifetime_p50_ns"], 1000);
  EXPECT_EQ(parse["lifetime_p90_ns"], 5000000);
  EXPECT_EQ(parse["lifetime_p99_ns"], 7000000);
  EXPECT_TRUE(json["sites"][1]["lifetime_p50_ns"].is_null());
}

TEST(LifetimesReportTest, TopLimitsTheSites) {
  std::ostringstream out;
  ASSERT_TRUE(WriteLifetimesJson(Summary(), Sites(), 1, out).has_value());
  EXPECT_EQ(nlohmann::json::parse(out.str())["sites"].size(), 1u);
}

TEST(LifetimesReportTest, TextShowsTheWindowAndOneRowPerSite) {
  std::ostringstream out;
  ASSERT_TRUE(WriteLifetimesText(Summary(), Sites(), std::nullopt, out).has_value());
  const std::string text = out.str();
  EXPECT_NE(text.find("Allocation profile of pid 77: window 2.00 s (requested 2.00 s, ended by "
                      "client)\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("Records: 10 sampled allocations in the window (2 after it ignored)"),
            std::string::npos) << text;
  // Below the clock's 4 ms resolution a lifetime is unknown but short.
  EXPECT_NE(text.find("   3.0 MiB    2.0 MiB    1.0 MiB          3    1.5 MiB   <4.0 ms    5.0 ms"
                      "    7.0 ms  Parse\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("         -         -         -  Cache\n"), std::string::npos) << text;
}

TEST(LifetimesReportTest, LostRecordsAreAWarning) {
  AllocationSummary summary = Summary();
  summary.header.records_lost = true;
  summary.covered_ns = 500000000;
  std::ostringstream out;
  WriteAllocationHeaderText(summary, out);
  EXPECT_NE(out.str().find("Warning: records_lost: jemalloc's record ring (record_bound 0) filled "
                           "and dropped the oldest records: the profile covers only the last "
                           "500.0 ms of the window"),
            std::string::npos) << out.str();
}

TEST(LifetimesReportTest, TheTextReportOfAnAllocationProfileSaysSoFirst) {
  const AllocationSummary summary = Summary();
  ReportOptions options;
  options.allocation = &summary;
  aggregate::Aggregation aggregation;
  aggregation.metric = Metric::kAllocSpace;
  aggregation.total = 1 << 20;
  std::ostringstream out;
  ASSERT_TRUE(TextReportRenderer(options).Render(aggregation, out).has_value());
  EXPECT_EQ(out.str().rfind("Allocation profile of pid 77: window 2.00 s", 0), 0u) << out.str();
  EXPECT_NE(out.str().find("Total: 1.0 MiB"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace memprof::report::render
