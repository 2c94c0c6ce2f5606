#include "cli/doctor/doctor_collector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stop_token>
#include <string>

#include "cli/doctor/doctor_report.h"
#include "common/text_file.h"
#include "tests/cli/testing/fake_profile_client.h"

namespace memprof::cli {
namespace {

// A recorded /proc with one process, 4242 (plain_target's smaps).
const std::string kProcRoot = std::string(MEMPROF_TEST_DATA_DIR) + "/doctor/proc";

memprof::v1::StatsResponse JemallocStats() {
  memprof::v1::StatsResponse stats;
  stats.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
  stats.mutable_summary()->set_resident(4u << 20);
  auto json = ReadTextFile(std::string(MEMPROF_TEST_DATA_DIR) + "/doctor/jemalloc_stats.json");
  EXPECT_TRUE(json);
  stats.set_raw_format(memprof::v1::RAW_STATS_FORMAT_JSON);
  stats.set_raw(json ? *json : "");
  return stats;
}

class DoctorCollectorTest : public ::testing::Test {
 protected:
  testing::FakeProfileClient client_;
  Target target_{4242, "/tmp/memprof/4242.sock", "plain_target"};
};

TEST_F(DoctorCollectorTest, ReadsSmapsAndTheAllocatorsReport) {
  client_.stats_result = JemallocStats();
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(client_.last_stats.raw_format(), memprof::v1::RAW_STATS_FORMAT_JSON);
  EXPECT_EQ(f->pid, 4242);
  EXPECT_EQ(f->rss_bytes, 26583040u) << "one RSS: the sum of the smaps it is broken down from";
  EXPECT_EQ(f->smaps.rss_bytes, 26583040u);
  EXPECT_EQ(client_.stats_calls, 1) << "no interval: one reading";
  EXPECT_TRUE(f->growth.readings.empty());
  EXPECT_EQ(f->smaps.top_anonymous.size(), 3u);
  EXPECT_EQ(f->allocator, AllocatorFamily::kJemalloc);
  EXPECT_EQ(f->summary.resident, 4u << 20);
  EXPECT_EQ(f->jemalloc.arenas, 9u);
  EXPECT_GE(f->cpus, 1u);
}

// Three readings over the interval, only the last with the allocator's
// report (the summary is enough to see growth).
TEST_F(DoctorCollectorTest, WatchesTheHeapOverTheInterval) {
  client_.stats_sequence = [](int n) -> Result<memprof::v1::StatsResponse> {
    memprof::v1::StatsResponse stats = JemallocStats();
    stats.mutable_summary()->set_allocated(static_cast<uint64_t>(n) << 20);
    return stats;
  };
  auto f = CollectDoctorFigures(target_, client_, kProcRoot,
                                GrowthWatch{std::chrono::milliseconds(20), {}});
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(client_.stats_calls, 3);
  EXPECT_EQ(client_.last_stats.raw_format(), memprof::v1::RAW_STATS_FORMAT_JSON);
  ASSERT_EQ(f->growth.readings.size(), 3u);
  EXPECT_EQ(f->growth.readings[0].figures.allocated, 1u << 20);
  EXPECT_EQ(f->growth.readings[2].figures.allocated, 3u << 20);
  EXPECT_GE(RateOf(f->growth).seconds, 0.02);
  EXPECT_EQ(f->summary.allocated, 3u << 20) << "the figures are the last reading's";
}

TEST_F(DoctorCollectorTest, AStopEndsTheWatch) {
  client_.stats_result = JemallocStats();
  std::stop_source stop;
  stop.request_stop();
  auto f = CollectDoctorFigures(target_, client_, kProcRoot,
                                GrowthWatch{std::chrono::minutes(5), stop.get_token()});
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(client_.stats_calls, 1);
}

TEST_F(DoctorCollectorTest, TcmallocIsReadFromItsProperties) {
  memprof::v1::StatsResponse stats;
  stats.set_allocator(memprof::v1::ALLOCATOR_KIND_TCMALLOC);
  (*stats.mutable_allocator_properties())["tcmalloc.pageheap_free_bytes"] = 12345;
  stats.set_raw_format(memprof::v1::RAW_STATS_FORMAT_TEXT);
  stats.set_raw("MALLOC:   ...");
  client_.stats_result = stats;
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->allocator, AllocatorFamily::kTcmalloc);
  EXPECT_EQ(f->tcmalloc.page_heap_free_bytes, 12345u);
}

TEST_F(DoctorCollectorTest, AProcessThatHasExited) {
  client_.stats_result = JemallocStats();
  target_.pid = 4243;
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(f.error().message,
            "pid 4243 (plain_target) has exited (no " + kProcRoot + "/4243/smaps)");
}

TEST_F(DoctorCollectorTest, ARemoteTargetIsRefusedBeforeAnyCall) {
  target_.address = "db7.example.com:7070";
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(f.error().message,
            "doctor reads the target's /proc/<pid>/smaps, so it works on local processes only; "
            "run it on db7.example.com");
  EXPECT_EQ(client_.calls, 0);
}

TEST_F(DoctorCollectorTest, AnAllocatorThatIsNeitherJemallocNorGlibc) {
  memprof::v1::StatsResponse stats;
  stats.set_allocator(memprof::v1::ALLOCATOR_KIND_OTHER);
  client_.stats_result = stats;
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kFailedPrecondition);
}

// A dump of memprof's sampler: one sample of 1 MiB at a 512 KiB interval
// stands for 1 MiB / (1 - e^-2) = 1212696.6 bytes (jeprof's unsampling).
constexpr char kSamplerDump[] =
    "heap_v2/524288\n# memprof_sampler since_unix_ms=1764648000123 dropped=7\n"
    "  t*: 1: 1048576 [0: 0]\n"
    "@ 0x401000 0x402000\n  t*: 1: 1048576 [0: 0]\n\nMAPPED_LIBRARIES:\n";

memprof::v1::StatusResponse SamplerStatus(int64_t since_unix_ms) {
  memprof::v1::StatusResponse status;
  status.set_sampler("memprof");
  status.set_profiling_active(true);
  status.set_sampler_since_unix_ms(since_unix_ms);
  status.add_sampler_not_intercepted("/usr/bin/app: malloc linked into the executable");
  return status;
}

TEST_F(DoctorCollectorTest, WhereTheAllocatorSamplesItselfNothingIsDumped) {
  client_.stats_result = JemallocStats();
  memprof::v1::StatusResponse status;
  status.set_sampler("jemalloc");
  client_.status_result = status;
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_FALSE(f->sampler.serves);
  EXPECT_EQ(std::count(client_.rpcs.begin(), client_.rpcs.end(), "Dump"), 0);
  std::ostringstream text;
  PrintDoctorReport(*f, {}, text);
  EXPECT_EQ(text.str().find("memprof's sampler"), std::string::npos) << text.str();
  EXPECT_EQ(DoctorReportToJson(*f, {})["sampler"]["serves"], false);
}

TEST_F(DoctorCollectorTest, MemprofsSamplerNeverSwitchedOnIsNotDumpedAndSaysHowToStartIt) {
  client_.stats_result = JemallocStats();
  client_.status_result = SamplerStatus(0);
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(f->sampler.serves);
  EXPECT_EQ(std::count(client_.rpcs.begin(), client_.rpcs.end(), "Dump"), 0);
  std::ostringstream text;
  PrintDoctorReport(*f, {}, text);
  EXPECT_NE(text.str().find("was never switched on: `memprofctl activate --pid 4242` starts it"),
            std::string::npos)
      << text.str();
}

// The sampler's samples unsampled as report does, set beside what the
// allocator counts: the share it covers, what it cannot see, what it dropped.
TEST_F(DoctorCollectorTest, MemprofsSamplerEstimateIsSetBesideTheAllocatorsFigure) {
  memprof::v1::StatsResponse stats = JemallocStats();
  stats.mutable_summary()->set_allocated(4u << 20);
  client_.stats_result = stats;
  client_.status_result = SamplerStatus(1764648000123);
  client_.dump_chunks = testing::MakeDumpStream(kSamplerDump, 64, 4242);
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(f->sampler.serves);
  EXPECT_TRUE(f->sampler.active);
  EXPECT_EQ(f->sampler.since_unix_ms, 1764648000123);
  EXPECT_NEAR(f->sampler.live_bytes, 1212696.6, 1.0);
  EXPECT_EQ(f->sampler.dropped, 7u);
  EXPECT_NEAR(SamplerCoveredShare(*f), 1212696.6 / (4 << 20), 1e-6);
  std::ostringstream text;
  PrintDoctorReport(*f, {}, text);
  EXPECT_NE(text.str().find("its samples estimate 1.2 MiB live of what was allocated since then: "
                            "28.9% of the 4.0 MiB jemalloc counts allocated; the rest was "
                            "allocated before it was switched on, or where it cannot intercept:\n"
                            "    /usr/bin/app: malloc linked into the executable\n"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("7 sampled allocations did not fit its tables"), std::string::npos);
  const nlohmann::json json = DoctorReportToJson(*f, {})["sampler"];
  EXPECT_EQ(json["live_estimate_bytes"].get<double>(), f->sampler.live_bytes);
  EXPECT_EQ(json["allocated_bytes"], 4u << 20);
  EXPECT_EQ(json["dropped"], 7);
  EXPECT_EQ(json["not_intercepted"].size(), 1u);
}

TEST_F(DoctorCollectorTest, ACorruptSamplerDumpFailsDoctorWithTheParsersWords) {
  client_.stats_result = JemallocStats();
  client_.status_result = SamplerStatus(1764648000123);
  client_.dump_chunks = testing::MakeDumpStream("heap_v2/524288\n@ 0xzz\n", 64, 4242);
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("the sampler's dump:"), std::string::npos) << f.error().message;
}

}  // namespace
}  // namespace memprof::cli
