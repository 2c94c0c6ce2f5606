#include "cli/commands/stats_command.h"

#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using memprof::v1::StatsResponse;

constexpr char kJemallocJson[] =
    R"({"jemalloc":{"version":"5.3.0","opt":{"prof":true,"prof":true},)"
    R"("stats":{"allocated":1000,"active":1250}}})";

StatsResponse JemallocStats(const std::string& raw) {
  StatsResponse s;
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
  auto* sum = s.mutable_summary();
  sum->set_allocated(1000);
  sum->set_active(1250);
  sum->set_metadata(300);
  sum->set_resident(4096);
  sum->set_mapped(8192);
  sum->set_retained(512);
  s.set_rss_bytes(12897485);
  s.set_raw_format(memprof::v1::RAW_STATS_FORMAT_JSON);
  s.set_raw(raw);
  return s;
}

class StatsCommandTest : public testing::CommandTest {
 protected:
  StatsOptions Options(bool json, bool raw) {
    StatsOptions o;
    o.target.pid = kPid;
    o.target.json = json;
    o.raw = raw;
    return o;
  }
};

TEST_F(StatsCommandTest, FragmentationRatio) {
  memprof::v1::StatsSummary s;
  EXPECT_EQ(FragmentationRatio(s), 0.0);
  s.set_active(1000);
  s.set_allocated(900);
  EXPECT_DOUBLE_EQ(FragmentationRatio(s), 0.1);
  s.set_allocated(1200);  // glibc numbers need not be consistent
  EXPECT_EQ(FragmentationRatio(s), 0.0);
}

TEST_F(StatsCommandTest, JsonEmbedsTheParsedJemallocObject) {
  client_.stats_result = JemallocStats(kJemallocJson);
  ASSERT_TRUE(RunStats(Options(true, false), discovery_, client_, out_));
  EXPECT_EQ(client_.last_stats.raw_format(), memprof::v1::RAW_STATS_FORMAT_JSON);
  const auto j = nlohmann::json::parse(out_.str());
  for (const char* key :
       {"pid", "allocated", "active", "metadata", "resident", "mapped", "retained", "rss_bytes"}) {
    EXPECT_TRUE(j.at(key).is_number_unsigned() || j.at(key).is_number_integer()) << key;
  }
  EXPECT_TRUE(j.at("fragmentation_ratio").is_number_float());
  EXPECT_DOUBLE_EQ(j["fragmentation_ratio"].get<double>(), 0.2);
  EXPECT_EQ(j["allocator"], "jemalloc");
  EXPECT_EQ(j["allocated"], 1000);
  ASSERT_TRUE(j.at("jemalloc").is_object());
  EXPECT_EQ(j["jemalloc"]["stats"]["allocated"], 1000);  // unwrapped from {"jemalloc": ...}
  EXPECT_EQ(j["jemalloc"]["version"], "5.3.0");
}

TEST_F(StatsCommandTest, FragmentationRatioIsAFloatEvenWhenZero) {
  StatsResponse s = JemallocStats(kJemallocJson);
  s.mutable_summary()->set_active(0);
  auto j = StatsToJson(s, 42);
  ASSERT_TRUE(j);
  EXPECT_TRUE((*j)["fragmentation_ratio"].is_number_float());
}

TEST_F(StatsCommandTest, BrokenJemallocJsonIsAnErrorNotBrokenOutput) {
  client_.stats_result = JemallocStats(R"({"jemalloc":{"stats":{"allocated":1000,}})");
  auto result = RunStats(Options(true, false), discovery_, client_, out_);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kInternal);
  EXPECT_NE(result.error().message.find("not valid JSON"), std::string::npos);
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(StatsCommandTest, GlibcTargetsHaveNoJemallocKey) {
  StatsResponse s = JemallocStats("<malloc version=\"1\"></malloc>");
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_GLIBC);
  s.set_raw_format(memprof::v1::RAW_STATS_FORMAT_XML);
  auto j = StatsToJson(s, 42);
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_FALSE(j->contains("jemalloc"));
  EXPECT_EQ((*j)["allocator"], "glibc");
}

TEST_F(StatsCommandTest, RawPrintsTheReportVerbatim) {
  StatsResponse s = JemallocStats("___ Begin jemalloc statistics ___\nweird  spacing\n");
  client_.stats_result = s;
  ASSERT_TRUE(RunStats(Options(false, true), discovery_, client_, out_));
  EXPECT_EQ(client_.last_stats.raw_format(), memprof::v1::RAW_STATS_FORMAT_TEXT);
  EXPECT_EQ(out_.str(), s.raw());
}

TEST_F(StatsCommandTest, DefaultTableIsHumanized) {
  client_.stats_result = JemallocStats("");
  ASSERT_TRUE(RunStats(Options(false, false), discovery_, client_, out_));
  EXPECT_EQ(client_.last_stats.raw_format(), memprof::v1::RAW_STATS_FORMAT_NONE);
  const std::string text = out_.str();
  for (const char* row : {"allocated", "active", "resident", "mapped", "retained", "metadata",
                          "RSS", "fragmentation"}) {
    EXPECT_NE(text.find(row), std::string::npos) << row;
  }
  EXPECT_NE(text.find("12.3 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("1000 B"), std::string::npos) << text;
  EXPECT_NE(text.find("20.0%"), std::string::npos) << text;
}

}  // namespace
}  // namespace memprof::cli
