// Runs on glibc malloc: no jemalloc in this process.
#include <gtest/gtest.h>

#include "agent/allocators/allocator.h"
#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "agent/heap/dump_streamer.h"
#include "tests/agent/support/test_allocations.h"

namespace memprof::agent {
namespace {

TEST(GlibcAllocatorTest, DetectedAsGlibc) {
  auto allocator = DetectAllocator();
  AllocatorInfo info = allocator->Info();
  EXPECT_EQ(info.kind, AllocatorKind::kGlibc);
  EXPECT_EQ(info.version.rfind("glibc ", 0), 0u) << info.version;
  EXPECT_FALSE(info.profiling_supported);
  EXPECT_EQ(allocator->Jemalloc(), nullptr);
}

TEST(GlibcAllocatorTest, SummaryFollowsAllocations) {
  auto allocator = DetectAllocator();
  auto before = allocator->Summary();
  ASSERT_TRUE(before);
  auto blocks = AllocateForProfile(100, 1000);
  auto after = allocator->Summary();
  ASSERT_TRUE(after);
  EXPECT_GE(after->allocated, before->allocated + 100u * 1000);
  EXPECT_GE(after->mapped, after->allocated);
  FreeAll(blocks);
}

TEST(GlibcAllocatorTest, ReportIsMallocInfoXml) {
  auto allocator = DetectAllocator();
  auto report = allocator->Report(ReportFormat::kJson);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->format, ReportFormat::kXml);
  EXPECT_EQ(report->text.rfind("<malloc version=", 0), 0u) << report->text.substr(0, 40);
}

// glibc's malloc keeps no profile: memprof's own sampler serves, and a dump
// before its first activation says to activate, with nothing patched.
TEST(GlibcAllocatorTest, HeapProfilesComeFromMemprofsSamplerAfterActivation) {
  auto allocator = DetectAllocator();
  EXPECT_EQ(allocator->Info().sampler, "memprof");
  DumpStreamer dumps(*allocator, DumpLimits{.max_active = 1});
  auto dump = dumps.Dump();
  ASSERT_FALSE(dump);
  EXPECT_EQ(dump.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(dump.error().message.find("memprof's sampler has not been activated in this process; "
                                      "run `memprofctl activate` first"),
            std::string::npos)
      << dump.error().message;
}

}  // namespace
}  // namespace memprof::agent
