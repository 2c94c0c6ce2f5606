#include "cli/doctor/doctor_findings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <string>

namespace memprof::cli {
namespace {

constexpr uint64_t kMebibyte = 1ull << 20;

// A healthy jemalloc process: nothing crosses a threshold.
DoctorFigures HealthyJemalloc() {
  DoctorFigures f;
  f.pid = 4321;
  f.cpus = 4;
  f.allocator = AllocatorFamily::kJemalloc;
  f.summary.allocated = 900 * kMebibyte;
  f.summary.active = 900 * kMebibyte;
  f.summary.resident = 1000 * kMebibyte;
  f.summary.metadata = 20 * kMebibyte;
  f.jemalloc.arenas = 16;
  f.jemalloc.threads = 8;
  f.jemalloc.dirty_decay_ms = 10000;
  f.jemalloc.muzzy_decay_ms = 0;
  f.jemalloc.background_thread = true;
  f.jemalloc.tcache_max = 32768;
  f.smaps.rss_bytes = 2000 * kMebibyte;
  f.smaps.anonymous_bytes = 1000 * kMebibyte;  // all of it the allocator's
  f.smaps.thread_stacks_bytes = 10 * kMebibyte;
  f.smaps.thread_stacks = 9;
  f.smaps.binaries_bytes = 990 * kMebibyte;
  f.rss_bytes = f.smaps.rss_bytes;
  return f;
}

DoctorFigures HealthyGlibc() {
  DoctorFigures f = HealthyJemalloc();
  f.allocator = AllocatorFamily::kGlibc;
  f.glibc.arenas = 8;  // = 2 per CPU: not many
  f.glibc.system_bytes = 1000 * kMebibyte;
  return f;
}

std::vector<std::string> Ids(const DoctorFigures& f) {
  std::vector<std::string> ids;
  for (const Finding& finding : Diagnose(f)) ids.push_back(finding.id);
  return ids;
}

bool Fires(const DoctorFigures& f, const std::string& id) {
  const auto ids = Ids(f);
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

const Finding& Only(const std::vector<Finding>& findings) {
  EXPECT_EQ(findings.size(), 1u);
  return findings.front();
}

bool Advises(const Finding& finding, const std::string& text) {
  return std::any_of(finding.advice.begin(), finding.advice.end(),
                     [&](const std::string& a) { return a.find(text) != std::string::npos; });
}

TEST(DoctorFindingsTest, HealthyProcessesHaveNoFindings) {
  EXPECT_TRUE(Ids(HealthyJemalloc()).empty());
  EXPECT_TRUE(Ids(HealthyGlibc()).empty());
}

TEST(DoctorFindingsTest, DirtyPagesFireAtTheirShare) {
  DoctorFigures f = HealthyJemalloc();
  f.jemalloc.dirty_bytes = 150 * kMebibyte;
  f.jemalloc.muzzy_bytes = 50 * kMebibyte;  // 200 of 1000 MiB resident: 20%
  EXPECT_TRUE(Fires(f, "dirty_pages"));
  f.jemalloc.muzzy_bytes = 50 * kMebibyte - 4096;
  EXPECT_FALSE(Fires(f, "dirty_pages"));
}

TEST(DoctorFindingsTest, DirtyPagesNeedEnoughBytesAtStake) {
  DoctorFigures f = HealthyJemalloc();
  f.summary.resident = 100 * kMebibyte;
  f.smaps.anonymous_bytes = 100 * kMebibyte;
  f.jemalloc.dirty_bytes = kDoctorMinBytes;
  EXPECT_TRUE(Fires(f, "dirty_pages"));
  f.jemalloc.dirty_bytes = kDoctorMinBytes - 4096;
  EXPECT_FALSE(Fires(f, "dirty_pages"));
}

TEST(DoctorFindingsTest, DirtyPagesAdviceFollowsTheOptions) {
  DoctorFigures f = HealthyJemalloc();
  f.jemalloc.dirty_bytes = 400 * kMebibyte;
  const Finding quick = Only(Diagnose(f));
  EXPECT_TRUE(Advises(quick, "memprofctl purge --pid 4321"));
  EXPECT_FALSE(Advises(quick, "dirty_decay_ms:"));
  EXPECT_FALSE(Advises(quick, "background_thread:true"));
  f.jemalloc.dirty_decay_ms = -1;
  f.jemalloc.background_thread = false;
  const Finding never = Only(Diagnose(f));
  EXPECT_TRUE(Advises(never, "MALLOC_CONF=dirty_decay_ms:10000"));
  EXPECT_TRUE(Advises(never, "background_thread:true"));
  EXPECT_NE(never.numbers.find("400.0 MiB dirty"), std::string::npos) << never.numbers;
  f.jemalloc.dirty_decay_ms = kLongDecayMs;  // long is above the limit
  EXPECT_FALSE(Advises(Only(Diagnose(f)), "dirty_decay_ms:"));
  f.jemalloc.dirty_decay_ms = kLongDecayMs + 1;
  EXPECT_TRUE(Advises(Only(Diagnose(f)), "dirty_decay_ms:"));
}

TEST(DoctorFindingsTest, FragmentationFiresAtItsRatio) {
  DoctorFigures f = HealthyJemalloc();
  f.summary.active = 1000 * kMebibyte;
  f.summary.allocated = 700 * kMebibyte;  // 30%
  EXPECT_TRUE(Fires(f, "fragmentation"));
  f.summary.allocated = 700 * kMebibyte + kMebibyte;
  EXPECT_FALSE(Fires(f, "fragmentation"));
}

TEST(DoctorFindingsTest, FragmentationNeedsEnoughBytesAndAdvisesFewerArenas) {
  DoctorFigures f = HealthyJemalloc();
  f.summary.active = 200 * kMebibyte;
  f.summary.allocated = 200 * kMebibyte - kDoctorMinBytes;
  const Finding finding = Only(Diagnose(f));
  EXPECT_EQ(finding.id, "fragmentation");
  EXPECT_TRUE(Advises(finding, "MALLOC_CONF=narenas:4 (now 16)"));
  f.summary.allocated += 4096;
  EXPECT_FALSE(Fires(f, "fragmentation"));
  f.summary.allocated -= 4096;
  f.jemalloc.arenas = 4;  // no more arenas than CPUs: no arena advice
  EXPECT_FALSE(Advises(Only(Diagnose(f)), "narenas:"));
}

TEST(DoctorFindingsTest, ThreadCachesFireAtTheirLimit) {
  DoctorFigures f = HealthyJemalloc();
  f.jemalloc.tcache_bytes = kTcacheLimitBytes;
  EXPECT_TRUE(Advises(Only(Diagnose(f)), "MALLOC_CONF=tcache_max:4096 (now 32768)"));
  f.jemalloc.tcache_bytes = kTcacheLimitBytes - 1;
  EXPECT_FALSE(Fires(f, "thread_caches"));
}

TEST(DoctorFindingsTest, MemoryOutsideTheAllocatorFiresAtItsShare) {
  DoctorFigures f = HealthyJemalloc();
  f.smaps.anonymous_bytes = 1500 * kMebibyte;  // 500 of 2000 MiB RSS: 25%
  SmapsMapping big;
  big.start = 0x7f0000000000;
  big.end = 0x7f0020000000;
  big.rss_bytes = 500 * kMebibyte;
  f.smaps.top_anonymous = {big};
  const Finding finding = Only(Diagnose(f));
  EXPECT_EQ(finding.id, "outside_allocator");
  EXPECT_NE(finding.numbers.find("7f0000000000-7f0020000000 500.0 MiB"), std::string::npos)
      << finding.numbers;
  f.smaps.anonymous_bytes -= 4096;
  EXPECT_FALSE(Fires(f, "outside_allocator"));
}

TEST(DoctorFindingsTest, ThreadStacksFireAtTheirShare) {
  DoctorFigures f = HealthyJemalloc();
  f.smaps.thread_stacks_bytes = 500 * kMebibyte;  // 25% of 2000 MiB
  f.smaps.thread_stacks = 4000;
  EXPECT_TRUE(Fires(f, "thread_stacks"));
  f.smaps.thread_stacks_bytes -= 4096;
  EXPECT_FALSE(Fires(f, "thread_stacks"));
}

TEST(DoctorFindingsTest, GlibcFreeMemoryFiresAtItsShare) {
  DoctorFigures f = HealthyGlibc();
  f.glibc.free_bytes = 150 * kMebibyte;
  f.glibc.fastbin_bytes = 50 * kMebibyte;  // 20% of 1000 MiB
  const Finding finding = Only(Diagnose(f));
  EXPECT_EQ(finding.id, "free_in_arenas");
  EXPECT_TRUE(Advises(finding, "memprofctl purge --pid 4321 (malloc_trim(0))"));
  EXPECT_TRUE(Advises(finding, "MALLOC_TRIM_THRESHOLD_"));
  f.glibc.fastbin_bytes -= 1;
  EXPECT_FALSE(Fires(f, "free_in_arenas"));
}

TEST(DoctorFindingsTest, GlibcArenasFireAboveTwoPerCpu) {
  DoctorFigures f = HealthyGlibc();
  f.glibc.arenas = 9;
  EXPECT_TRUE(Advises(Only(Diagnose(f)), "MALLOC_ARENA_MAX=8"));
  f.glibc.system_bytes = kDoctorMinBytes - 1;
  f.summary.resident = f.glibc.system_bytes;
  EXPECT_FALSE(Fires(f, "many_arenas"));
}

// Readings of `allocated` (MiB) one second apart.
GrowthFigures Readings(std::initializer_list<uint64_t> allocated_mib) {
  GrowthFigures g;
  const auto start = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
  int second = 0;
  for (uint64_t mib : allocated_mib) {
    StatsSample sample;
    sample.taken = start + std::chrono::seconds(second++);
    sample.figures.allocated = mib * kMebibyte;
    sample.figures.rss_bytes = 2 * mib * kMebibyte;
    g.readings.push_back(sample);
  }
  return g;
}

TEST(DoctorFindingsTest, AHeapThatGrowsInEveryReadingIsAFinding) {
  DoctorFigures f = HealthyJemalloc();
  f.growth = Readings({900, 901, 902});  // 1 MiB/s
  const Finding finding = Only(Diagnose(f));
  EXPECT_EQ(finding.id, "heap_growth");
  EXPECT_EQ(finding.what, "the heap grows 1.0 MiB/s");
  EXPECT_EQ(finding.numbers,
            "allocated grew from 900.0 MiB to 902.0 MiB in 2.0 s, growing from each of 3 readings "
            "to the next (limit 512.0 KiB/s); RSS +2.0 MiB/s");
  EXPECT_TRUE(Advises(finding, "memprofctl stats --pid 4321 --watch 10s"));
  EXPECT_TRUE(Advises(finding, "memprofctl profile --pid 4321 --duration 5m"));
  f.allocator = AllocatorFamily::kGlibc;
  f.glibc.arenas = 8;
  f.glibc.system_bytes = 1000 * kMebibyte;
  EXPECT_TRUE(Advises(Only(Diagnose(f)), "restart the process under `memprofctl run`"));
}

TEST(DoctorFindingsTest, GrowthBelowTheLimitOrNotSteadyIsNoFinding) {
  DoctorFigures f = HealthyJemalloc();
  f.growth = Readings({900, 900, 901});  // flat, then a burst
  EXPECT_FALSE(Fires(f, "heap_growth"));
  f.growth = Readings({900, 903, 902});  // up and down
  EXPECT_FALSE(Fires(f, "heap_growth"));
  f.growth.readings.back().figures.allocated = 900 * kMebibyte + 1024 * 1023;  // < 512 KiB/s
  f.growth.readings[1].figures.allocated = 900 * kMebibyte + 1024;
  EXPECT_FALSE(Fires(f, "heap_growth"));
  f.growth = Readings({900});  // not watched
  EXPECT_FALSE(Fires(f, "heap_growth"));
}

DoctorFigures HealthyTcmalloc() {
  DoctorFigures f = HealthyJemalloc();
  f.allocator = AllocatorFamily::kTcmalloc;
  f.jemalloc = {};
  f.tcmalloc.page_heap_free_bytes = 10 * kMebibyte;
  f.tcmalloc.thread_cache_bytes = 8 * kMebibyte;
  f.tcmalloc.max_thread_cache_bytes = 32 * kMebibyte;
  return f;
}

TEST(DoctorFindingsTest, TcmallocIsJudgedByItsOwnFigures) {
  DoctorFigures f = HealthyTcmalloc();
  EXPECT_TRUE(Ids(f).empty());
  f.tcmalloc.page_heap_free_bytes = 200 * kMebibyte;  // 20% of 1000 MiB resident
  const Finding free_pages = Only(Diagnose(f));
  EXPECT_EQ(free_pages.id, "page_heap_free");
  EXPECT_TRUE(
      Advises(free_pages, "memprofctl purge --pid 4321 (MallocExtension::ReleaseFreeMemory)"));
  EXPECT_TRUE(Advises(free_pages, "TCMALLOC_RELEASE_RATE=10"));
  EXPECT_TRUE(Advises(free_pages, "TCMALLOC_AGGRESSIVE_DECOMMIT=true"));
  f.tcmalloc.page_heap_free_bytes -= 4096;
  EXPECT_FALSE(Fires(f, "page_heap_free"));

  f = HealthyTcmalloc();
  f.tcmalloc.thread_cache_bytes = kTcacheLimitBytes;
  EXPECT_TRUE(Advises(Only(Diagnose(f)), "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES="));

  f = HealthyTcmalloc();
  f.summary.active = 1000 * kMebibyte;
  f.summary.allocated = 700 * kMebibyte;
  f.tcmalloc.central_cache_free_bytes = 250 * kMebibyte;
  const Finding fragmentation = Only(Diagnose(f));
  EXPECT_EQ(fragmentation.what, "much of tcmalloc's active memory is not allocated");
  EXPECT_NE(fragmentation.numbers.find("free in the central caches 250.0 MiB"), std::string::npos)
      << fragmentation.numbers;
  EXPECT_FALSE(Advises(fragmentation, "narenas"));
  EXPECT_NE(ChecksNotApplicable(AllocatorFamily::kTcmalloc).find("tcmalloc has none of them"),
            std::string::npos);
  EXPECT_EQ(ChecksNotApplicable(AllocatorFamily::kJemalloc), "");
}

}  // namespace
}  // namespace memprof::cli
