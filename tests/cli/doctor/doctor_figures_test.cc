#include "cli/doctor/doctor_figures.h"

#include <gtest/gtest.h>

#include <string>

#include "common/proc_status.h"

namespace memprof::cli {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::string Fixture(const char* name) {
  auto text = ReadTextFile(std::string(MEMPROF_TEST_DATA_DIR) + "/doctor/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : std::string();
}

// Recorded from plain_target: malloc_stats_print("J") of jemalloc 5.3.
TEST(DoctorFiguresTest, ReadsJemallocStatsJson) {
  auto f = ParseJemallocFigures(Fixture("jemalloc_stats.json"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->dirty_bytes, 10u * 4096);
  EXPECT_EQ(f->muzzy_bytes, 0u);
  EXPECT_EQ(f->tcache_bytes, 777064u);
  EXPECT_EQ(f->arenas, 9u);
  EXPECT_EQ(f->threads, 10u);
  EXPECT_EQ(f->dirty_decay_ms, 10000);
  EXPECT_EQ(f->muzzy_decay_ms, 0);
  EXPECT_FALSE(f->background_thread);
  EXPECT_EQ(f->narenas, 8u);
  EXPECT_EQ(f->tcache_max, 32768u);
  EXPECT_TRUE(f->retain);
}

TEST(DoctorFiguresTest, RejectsJemallocJsonWithoutTheFigures) {
  EXPECT_FALSE(ParseJemallocFigures("not json"));
  auto missing = ParseJemallocFigures(R"({"jemalloc": {"arenas": {"page": 4096}}})");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/stats.arenas/merged/pdirty"), std::string::npos);
}

// Recorded from glibc_target (glibc 2.36, ten arenas).
TEST(DoctorFiguresTest, ReadsMallocInfoTotals) {
  auto f = ParseMallocInfo(Fixture("glibc_malloc_info.xml"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->arenas, 10u);
  EXPECT_EQ(f->system_bytes, 5840896u);
  EXPECT_EQ(f->free_bytes, 1181216u);
  EXPECT_EQ(f->fastbin_bytes, 752u);
  EXPECT_EQ(f->mmap_bytes, 0u);
  EXPECT_EQ(f->mmap_chunks, 0u);
  EXPECT_FALSE(ParseMallocInfo("<other/>"));
}

TEST(DoctorFiguresTest, PartsAddUpToTheMappedRss) {
  DoctorFigures f;
  f.summary.resident = 300 * kMiB;
  f.smaps.rss_bytes = 1000 * kMiB;
  f.smaps.anonymous_bytes = 500 * kMiB;
  f.smaps.thread_stacks_bytes = 100 * kMiB;
  f.smaps.binaries_bytes = 250 * kMiB;
  f.smaps.other_files_bytes = 100 * kMiB;
  f.smaps.shared_memory_bytes = 50 * kMiB;
  const RssParts p = PartsOf(f);
  EXPECT_EQ(p.allocator, 300 * kMiB);
  EXPECT_EQ(p.other_anonymous, 200 * kMiB);
  EXPECT_EQ(p.allocator + p.thread_stacks + p.binaries + p.other_files + p.shared_memory +
                p.other_anonymous,
            f.smaps.rss_bytes);
  f.summary.resident = 800 * kMiB;  // more than the anonymous RSS: capped
  EXPECT_EQ(PartsOf(f).allocator, 500 * kMiB);
  EXPECT_EQ(PartsOf(f).other_anonymous, 0u);
}

TEST(DoctorFiguresTest, RatiosAreZeroWithoutADenominator) {
  const DoctorRatios r = RatiosOf(DoctorFigures{});
  EXPECT_EQ(r.fragmentation, 0.0);
  EXPECT_EQ(r.dirty_share, 0.0);
  EXPECT_EQ(r.metadata_share, 0.0);
  EXPECT_EQ(r.unexplained_share, 0.0);
  EXPECT_EQ(r.stack_share, 0.0);
}

}  // namespace
}  // namespace memprof::cli
