// Runs on jemalloc whose heap profiling was not enabled at start-up
// (opt.prof=false, the jemalloc default).
#include <unistd.h>

#include <gtest/gtest.h>

#include "agent/allocators/allocator.h"
#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "agent/heap/allocation_recorder.h"
#include "agent/heap/dump_streamer.h"
#include "agent/heap/profiling_controller.h"

namespace memprof::agent {
namespace {

TEST(ProfilingOffTest, InfoShowsSupportedButNotEnabled) {
  auto allocator = DetectAllocator();
  AllocatorInfo info = allocator->Info();
  EXPECT_EQ(info.kind, AllocatorKind::kJemalloc);
  EXPECT_TRUE(info.profiling_supported);
  EXPECT_FALSE(info.profiling_enabled);
  EXPECT_FALSE(info.profiling_active);
  EXPECT_EQ(info.sample_interval_bytes, 0u);
}

TEST(ProfilingOffTest, ActivateAndDumpExplainHowToRestart) {
  auto allocator = DetectAllocator();
  ProfilingController controller(*allocator);
  DumpStreamer dumps(*allocator, DumpLimits{.max_active = 1});
  auto activate = controller.Activate(std::nullopt);
  auto dump = dumps.Dump();
  for (const Error& e : {activate.error(), dump.error()}) {
    EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
    EXPECT_NE(e.message.find("not enabled when the process started"), std::string::npos);
    EXPECT_NE(e.message.find("MALLOC_CONF=prof:true,prof_active:false"), std::string::npos);
    EXPECT_NE(e.message.find("memprofctl run"), std::string::npos);
  }
  EXPECT_FALSE(controller.Deactivate());
  EXPECT_EQ(dumps.DumpsServed(), 0u);
}

TEST(ProfilingOffTest, AnAllocationWindowExplainsHowToRestart) {
  auto allocator = DetectAllocator();
  ProfilingController controller(*allocator);
  AllocationRecorder recorder(*allocator, controller, ::getpid());
  auto opened = recorder.Open(AllocationWindowRequest{std::chrono::seconds(5), 0});
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(opened.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(opened.error().message.find("not enabled when the process started"), std::string::npos)
      << opened.error().message;
  EXPECT_EQ(recorder.OpenWindow(), 0u);
}

TEST(ProfilingOffTest, ResetAndSampleIntervalExplainHowToRestart) {
  auto allocator = DetectAllocator();
  ProfilingController controller(*allocator);
  for (const ActivationRequest& request :
       {ActivationRequest{std::nullopt, 0, true}, ActivationRequest{std::nullopt, 4096, false}}) {
    auto r = controller.Activate(request);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
    EXPECT_NE(r.error().message.find("MALLOC_CONF=prof:true,prof_active:false"),
              std::string::npos)
        << r.error().message;
  }
  // The facade itself: prof.reset answers ENOENT without opt.prof.
  auto reset = allocator->Jemalloc()->Reset(std::nullopt);
  ASSERT_FALSE(reset);
  EXPECT_EQ(reset.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(reset.error().message.find("opt.prof=false"), std::string::npos)
      << reset.error().message;
}

TEST(ProfilingOffTest, StatisticsStillWork) {
  auto allocator = DetectAllocator();
  auto summary = allocator->Summary();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_GT(summary->allocated, 0u);
}

}  // namespace
}  // namespace memprof::agent
