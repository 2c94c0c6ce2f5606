#include "agent/heap/capture_watcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "agent/heap/profiling_controller.h"
#include "tests/agent/support/test_allocations.h"
#include "tests/agent/support/thread_names.h"
#include "tests/support/wait_until.h"

namespace memprof::agent {
namespace {

using std::chrono::milliseconds;
using test_support::WaitUntil;

class CaptureWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allocator_ = DetectAllocator();
    ASSERT_NE(allocator_->Jemalloc(), nullptr);
    profiling_ = std::make_unique<ProfilingController>(*allocator_);
    watcher_ = std::make_unique<CaptureWatcher>(*allocator_, milliseconds(10));
  }
  void TearDown() override {
    watcher_.reset();
    (void)profiling_->Deactivate();
  }
  std::unique_ptr<const Allocator> allocator_;
  std::unique_ptr<ProfilingController> profiling_;
  std::unique_ptr<CaptureWatcher> watcher_;
};

TEST_F(CaptureWatcherTest, SettingsOutOfBoundsAreRefusedAndArmNothing) {
  auto small = watcher_->Arm(CaptureSettings{.growth_bytes = 1000, .keep = 4});
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(small.error().message.find("outside 1 MiB..1 TiB"), std::string::npos);
  auto keep = watcher_->Arm(CaptureSettings{.growth_bytes = 1 << 20, .keep = 17});
  ASSERT_FALSE(keep);
  EXPECT_EQ(keep.error().message, "captures to keep 17 is outside 1..16");
  EXPECT_FALSE(watcher_->State().armed);
  EXPECT_EQ(ThreadsNamed("memprof-capture"), 0);
}

TEST_F(CaptureWatcherTest, ATriggerIsNeededAndTheShareIsBounded) {
  auto none = watcher_->Arm(CaptureSettings{.growth_bytes = 0, .keep = 4});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(none.error().message.find("needs a trigger"), std::string::npos);
  auto share =
      watcher_->Arm(CaptureSettings{.growth_bytes = 0, .keep = 4, .near_limit_percent = 100});
  ASSERT_FALSE(share);
  EXPECT_EQ(share.error().message, "near-limit share 100% is outside 1..99%");
  EXPECT_FALSE(watcher_->State().armed);
}

TEST(NearLimitTest, DueAtTheShareExactlyAndWithoutOverflow) {
  EXPECT_FALSE(NearLimitDue(89, 100, 90));
  EXPECT_TRUE(NearLimitDue(90, 100, 90));
  // 90% of 1000 bytes is 900; of 2^62, still exact.
  EXPECT_FALSE(NearLimitDue(899, 1000, 90));
  EXPECT_TRUE(NearLimitDue(900, 1000, 90));
  const uint64_t huge = uint64_t{1} << 62;
  EXPECT_FALSE(NearLimitDue(huge / 100 * 90 - 1, huge, 90));
  EXPECT_TRUE(NearLimitDue(huge / 100 * 90 + huge % 100 * 90 / 100, huge, 90));
}

TEST(NearLimitTest, TheNextCaptureComesAtTheNextStepNotYetReached) {
  // Captured at 91% of the limit: the next at 92%, then 94%...
  EXPECT_EQ(NextNearLimitPercent(91, 100, 90), 92u);
  EXPECT_EQ(NextNearLimitPercent(92, 100, 90), 94u);
  // A jump past several steps skips them.
  EXPECT_EQ(NextNearLimitPercent(97, 100, 90), 98u);
  // At the limit, no further share is left.
  EXPECT_GT(NextNearLimitPercent(100, 100, 90), 100u);
}

TEST_F(CaptureWatcherTest, CapturesAGrowthAndKeepsItAfterDisarming) {
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  EXPECT_EQ(ThreadsNamed("memprof-capture"), 0);  // none until armed
  auto armed = watcher_->Arm(CaptureSettings{.growth_bytes = 4 << 20, .keep = 2});
  ASSERT_TRUE(armed) << armed.error().message;
  EXPECT_TRUE(armed->armed);
  EXPECT_TRUE(WaitUntil([] { return ThreadsNamed("memprof-capture") == 1; }, milliseconds(10000)));
  UseUpSampleCountdown();
  auto blocks = AllocateForProfile(64, 128 << 10);  // 8 MiB over the mark
  ASSERT_TRUE(WaitUntil([&] { return watcher_->State().taken_total >= 1; }, milliseconds(10000)));
  CaptureState state = watcher_->State();
  ASSERT_FALSE(state.held.empty());
  EXPECT_GE(state.held.back().allocated_bytes, armed->high_water_bytes + (4 << 20));
  EXPECT_EQ(state.high_water_bytes, state.held.back().allocated_bytes);

  auto opened = watcher_->Open(state.held.back().sequence);
  ASSERT_TRUE(opened) << opened.error().message;
  std::string head;
  ASSERT_TRUE(opened->dump->ReadNext(8, head));
  EXPECT_EQ(head, "heap_v2/");
  EXPECT_EQ(opened->dump->created_unix_ms(), state.held.back().created_unix_ms);

  watcher_->Disarm();
  EXPECT_EQ(ThreadsNamed("memprof-capture"), 0);
  CaptureState after = watcher_->State();
  EXPECT_FALSE(after.armed);
  // Disarming dropped none: every capture taken is held, up to keep (2). Not
  // compared with `state`: the 8 MiB can cross a second 4 MiB step after it.
  EXPECT_FALSE(after.held.empty());
  EXPECT_EQ(after.held.size(), std::min<uint64_t>(after.taken_total, 2));
  FreeAll(blocks);
}

TEST_F(CaptureWatcherTest, DisarmsItselfWhenProfilingStops) {
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  ASSERT_TRUE(watcher_->Arm(CaptureSettings{.growth_bytes = 1 << 30, .keep = 1}));
  ASSERT_TRUE(profiling_->Deactivate());
  EXPECT_TRUE(WaitUntil([&] { return !watcher_->State().armed; }, milliseconds(10000)));
  EXPECT_TRUE(WaitUntil([] { return ThreadsNamed("memprof-capture") == 0; }, milliseconds(10000)));
  // Arming again starts a new thread.
  ASSERT_TRUE(profiling_->Activate(std::nullopt));
  ASSERT_TRUE(watcher_->Arm(CaptureSettings{.growth_bytes = 1 << 30, .keep = 1}));
  EXPECT_TRUE(WaitUntil([] { return ThreadsNamed("memprof-capture") == 1; }, milliseconds(10000)));
}

}  // namespace
}  // namespace memprof::agent
