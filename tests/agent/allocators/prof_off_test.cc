// Runs on jemalloc whose heap profiling was not enabled at start-up
// (opt.prof=false, the jemalloc default).
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "agent/allocators/allocator.h"
#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "agent/heap/allocation_recorder.h"
#include "agent/heap/dump_streamer.h"
#include "agent/heap/profiling_controller.h"
#include "tests/support/files.h"

namespace memprof::agent {
namespace {

TEST(ProfilingOffTest, InfoShowsSupportedButNotEnabled) {
  auto allocator = DetectAllocator();
  AllocatorInfo info = allocator->Info();
  EXPECT_EQ(info.kind, AllocatorKind::kJemalloc);
  EXPECT_TRUE(info.profiling_supported);
  EXPECT_FALSE(info.profiling_enabled);
  EXPECT_FALSE(info.profiling_active);
  // memprof's own sampler serves instead, at its default interval.
  EXPECT_EQ(info.sampler, "memprof");
  EXPECT_EQ(info.sample_interval_bytes, 512u * 1024);
}

// Without opt.prof, memprof's own sampler serves: a dump before activation
// says to activate; after it, a heap_v2 profile that says what it covers.
TEST(ProfilingOffTest, ActivateAndDumpUseMemprofsSampler) {
  auto allocator = DetectAllocator();
  ProfilingController controller(*allocator);
  DumpStreamer dumps(*allocator, DumpLimits{.max_active = 1});
  auto early = dumps.Dump();
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(early.error().message.find("run `memprofctl activate` first"), std::string::npos)
      << early.error().message;
  auto activate = controller.Activate(std::nullopt);
  ASSERT_TRUE(activate) << activate.error().message;
  EXPECT_TRUE(allocator->Info().profiling_active);
  auto dump = dumps.Dump();
  ASSERT_TRUE(dump) << dump.error().message;
  EXPECT_EQ(dumps.DumpsServed(), 1u);
  auto deactivate = controller.Deactivate();
  ASSERT_TRUE(deactivate) << deactivate.error().message;
  EXPECT_FALSE(allocator->Info().profiling_active);
  // Reset with nothing active: every slot the sampler changed is put back.
  ASSERT_TRUE(allocator->ReadyProfiler());
  ASSERT_TRUE((*allocator->ReadyProfiler())->Reset(std::nullopt));
}

// An allocation window where jemalloc cannot record: memprof's sampler
// records it, switched on for the window and off again at its end.
TEST(ProfilingOffTest, AnAllocationWindowIsRecordedByMemprofsSampler) {
  auto allocator = DetectAllocator();
  ProfilingController controller(*allocator);
  AllocationRecorder recorder(*allocator, controller, ::getpid());
  auto opened = recorder.Open(AllocationWindowRequest{std::chrono::seconds(120), 1000});
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  EXPECT_TRUE(opened->profiling_activated);
  EXPECT_EQ(opened->sample_interval_bytes, 512u * 1024);
  EXPECT_TRUE(allocator->Info().profiling_active);
  // The sampler leaves this executable's own calls alone (it is linked into
  // it, as into the agent): glibc's qsort allocates and frees its 1 MiB
  // buffer itself, through libc's own slots.
  std::vector<int> numbers(1 << 18);
  for (int i = 0; i < 64; ++i) {
    for (size_t j = 0; j < numbers.size(); ++j) numbers[j] = static_cast<int>((j * 7919u) % 65521u);
    std::qsort(numbers.data(), numbers.size(), sizeof(int), [](const void* a, const void* b) {
      return *static_cast<const int*>(a) - *static_cast<const int*>(b);
    });
  }
  auto dump = recorder.Fetch(opened->id);
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  std::string text;
  std::string part;
  while (true) {
    auto more = (*dump)->ReadNext(1 << 20, part);
    ASSERT_TRUE(more.has_value());
    if (!*more) break;
    text += part;
  }
  text = test_support::Gunzipped(text);
  EXPECT_TRUE(text.starts_with("memprof allocation profile v1\n")) << text.substr(0, 200);
  EXPECT_NE(text.find("\nclock: monotonic\n"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find("\nended_by: client\n"), std::string::npos);
  // What the records hold is checked where the sampler sees every call
  // (recent_ring_test.cc, sampler_test.cc); here, that the window is one.
  EXPECT_NE(text.find("\n--- recent allocations\n{\"sample_interval\":524288,"), std::string::npos)
      << text.substr(0, 600);
  EXPECT_TRUE(text.ends_with("\n--- end\n"));
  EXPECT_EQ(recorder.OpenWindow(), 0u);
  EXPECT_FALSE(allocator->Info().profiling_active) << "the window put sampling back off";
  ASSERT_TRUE((*allocator->ReadyProfiler())->Reset(std::nullopt));
}

// memprof's sampler takes a reset and a new interval, as jemalloc's would.
TEST(ProfilingOffTest, ResetAndSampleIntervalGoToMemprofsSampler) {
  auto allocator = DetectAllocator();
  ProfilingController controller(*allocator);
  for (const ActivationRequest& request :
       {ActivationRequest{std::nullopt, 0, true}, ActivationRequest{std::nullopt, 4096, false}}) {
    auto r = controller.Activate(request);
    ASSERT_TRUE(r) << r.error().message;
  }
  EXPECT_EQ(allocator->Info().sample_interval_bytes, 4096u);
  ASSERT_TRUE(controller.Deactivate());
  // jemalloc's own facade still refuses: prof.reset answers ENOENT without opt.prof.: prof.reset answers ENOENT without opt.prof.
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
