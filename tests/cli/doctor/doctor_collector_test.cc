#include "cli/doctor/doctor_collector.h"

#include <gtest/gtest.h>

#include <string>

#include "common/proc_status.h"
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
  EXPECT_EQ(f->rss_bytes, 26028u * 1024);
  EXPECT_EQ(f->smaps.rss_bytes, 26583040u);
  EXPECT_EQ(f->smaps.top_anonymous.size(), 3u);
  EXPECT_EQ(f->allocator, AllocatorFamily::kJemalloc);
  EXPECT_EQ(f->summary.resident, 4u << 20);
  EXPECT_EQ(f->jemalloc.arenas, 9u);
  EXPECT_GE(f->cpus, 1u);
}

TEST_F(DoctorCollectorTest, AProcessThatHasExited) {
  client_.stats_result = JemallocStats();
  target_.pid = 4243;
  auto f = CollectDoctorFigures(target_, client_, kProcRoot);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(f.error().message,
            "pid 4243 (plain_target) has exited (no " + kProcRoot + "/4243/smaps_rollup)");
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
