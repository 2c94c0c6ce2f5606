#include "cli/doctor/doctor_figures.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/text_file.h"

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

// malloc_stats_print("J") of Debian's jemalloc 5.3 under MALLOC_CONF=narenas:1,
// recorded from a one-thread program that mallocs 100 blocks of 10000 bytes
// and frees 50: jemalloc prints no "merged" arena when only one arena is in
// use, so that arena's own figures are the totals.
TEST(DoctorFiguresTest, ReadsASingleArenaJemalloc) {
  auto f = ParseJemallocFigures(Fixture("jemalloc_stats_narenas1.json"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->narenas, 1u);
  EXPECT_GE(f->threads, 1u);
  EXPECT_GT(f->tcache_bytes, 0u);
}

TEST(DoctorFiguresTest, AddsUpTheArenasWhenThereIsNoMergedTotal) {
  auto f = ParseJemallocFigures(R"({"arenas": {"page": 4096, "narenas": 3},
      "opt": {"dirty_decay_ms": 10000, "muzzy_decay_ms": 0, "background_thread": false,
              "narenas": 2, "tcache_max": 32768, "retain": true},
      "stats.arenas": {
        "0": {"pdirty": 3, "pmuzzy": 1, "tcache_bytes": 100, "nthreads": 2},
        "2": {"pdirty": 5, "pmuzzy": 0, "tcache_bytes": 50, "nthreads": 1},
        "destroyed": {"pdirty": 1000}}})");
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->dirty_bytes, 8u * 4096);
  EXPECT_EQ(f->muzzy_bytes, 4096u);
  EXPECT_EQ(f->tcache_bytes, 150u);
  EXPECT_EQ(f->threads, 3u);
  EXPECT_EQ(f->arenas, 3u);
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

// The allocator's resident memory, one figure: its own, capped by the
// anonymous RSS it lives in; the unused share uses the same (metadata is a
// share of the allocator's own figure, beside which it is counted).
TEST(DoctorFiguresTest, OneResidentFigureThroughout) {
  DoctorFigures f;
  f.summary.resident = 800 * kMiB;
  f.summary.metadata = 50 * kMiB;
  f.smaps.anonymous_bytes = 500 * kMiB;
  f.jemalloc.dirty_bytes = 250 * kMiB;
  EXPECT_EQ(AllocatorResident(f), 500 * kMiB);
  EXPECT_EQ(PartsOf(f).allocator, AllocatorResident(f));
  EXPECT_DOUBLE_EQ(RatiosOf(f).dirty_share, 0.5);
  EXPECT_DOUBLE_EQ(RatiosOf(f).metadata_share, 50.0 / 800);
}

TEST(DoctorFiguresTest, GrowthIsMeasuredOverTheTimeTaken) {
  GrowthFigures g;
  const auto start = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    StatsSample s;
    s.taken = start + std::chrono::milliseconds(1000 * i);
    s.figures.allocated = (100 + 2 * static_cast<uint64_t>(i)) * kMiB;
    s.figures.rss_bytes = 300 * kMiB - static_cast<uint64_t>(i) * kMiB;
    g.readings.push_back(s);
  }
  const GrowthRate r = RateOf(g);
  EXPECT_DOUBLE_EQ(r.seconds, 2.0);
  EXPECT_EQ(r.allocated_change, static_cast<int64_t>(4 * kMiB));
  EXPECT_DOUBLE_EQ(r.allocated_per_second, 2.0 * kMiB);
  EXPECT_EQ(r.rss_change, -static_cast<int64_t>(2 * kMiB));
  EXPECT_TRUE(r.steady);
  EXPECT_EQ(SignedBytesText(static_cast<double>(r.rss_change)), "-2.0 MiB");
  EXPECT_EQ(SignedBytesText(0.2), "0 B");
  EXPECT_FALSE(RateOf(GrowthFigures{}).steady);
}

TEST(DoctorFiguresTest, ReadsTcmallocProperties) {
  const TcmallocFigures t = ReadTcmallocFigures({{"tcmalloc.pageheap_free_bytes", 4096},
                                                 {"tcmalloc.pageheap_unmapped_bytes", 8192},
                                                 {"tcmalloc.current_total_thread_cache_bytes", 7},
                                                 {"tcmalloc.aggressive_memory_decommit", 1}});
  EXPECT_EQ(t.page_heap_free_bytes, 4096u);
  EXPECT_EQ(t.page_heap_unmapped_bytes, 8192u);
  EXPECT_EQ(t.thread_cache_bytes, 7u);
  EXPECT_EQ(t.central_cache_free_bytes, 0u);
  EXPECT_TRUE(t.aggressive_decommit);
}

}  // namespace
}  // namespace memprof::cli
