#include "cli/doctor/doctor_collector.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <string>

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

}  // namespace
}  // namespace memprof::cli
