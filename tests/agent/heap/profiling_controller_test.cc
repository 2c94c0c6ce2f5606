#include "agent/heap/profiling_controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

#include "agent/allocators/allocator_detection.h"
#include "agent/allocators/jemalloc_control.h"
#include "agent/heap/dump_streamer.h"
#include "common/duration.h"
#include "tests/agent/support/test_allocations.h"
#include "tests/agent/support/thread_names.h"
#include "tests/support/wait_until.h"

namespace memprof::agent {

using test_support::WaitUntil;

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ProfilingControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allocator_ = DetectAllocator();
    ASSERT_NE(allocator_->Jemalloc(), nullptr);
    controller_ = std::make_unique<ProfilingController>(*allocator_);
  }
  void TearDown() override {
    (void)controller_->Deactivate();
    // Back to the start-up lg_prof_sample:10 for the tests that follow.
    (void)controller_->Activate(ActivationRequest{std::nullopt, 1024, false});
    (void)controller_->Deactivate();
  }
  bool Active() const { return allocator_->Jemalloc()->ProfilingActive(); }
  // The live sampled objects of a dump taken now: N of its "  t*: N: ..." line.
  int64_t LiveSampledObjects() const {
    DumpStreamer streamer(*allocator_, DumpLimits{.max_active = 1});
    auto dump = streamer.Dump();
    if (!dump) {
      ADD_FAILURE() << dump.error().message;
      return -1;
    }
    std::string text, part;
    while (true) {
      auto more = (*dump)->ReadNext(1 << 20, part);
      if (!more || !*more) break;
      text += part;
    }
    long long objects = -1;
    const size_t totals = text.find("t*: ");
    if (totals == std::string::npos ||
        std::sscanf(text.c_str() + totals, "t*: %lld:", &objects) != 1) {
      ADD_FAILURE() << "no totals line in\n" << text.substr(0, 200);
    }
    return objects;
  }

  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<ProfilingController> controller_;
};

TEST_F(ProfilingControllerTest, ActivateIsIdempotentAndReportsPreviousState) {
  auto first = controller_->Activate(std::nullopt);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->previous.active);
  EXPECT_TRUE(first->current.active);
  EXPECT_EQ(first->current.window_end_unix_ms, 0);
  auto second = controller_->Activate(std::nullopt);
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->previous.active);
  EXPECT_TRUE(second->current.active);
  EXPECT_FALSE(second->window_replaced);
}

TEST_F(ProfilingControllerTest, TimedWindowEndsByItself) {
  auto r = controller_->Activate(seconds(1));
  ASSERT_TRUE(r);
  EXPECT_GT(r->current.window_end_unix_ms, 0);
  EXPECT_EQ(controller_->WindowEndUnixMs(), r->current.window_end_unix_ms);
  EXPECT_TRUE(Active());
  EXPECT_TRUE(WaitUntil([&] { return !Active(); }, seconds(5)));
  EXPECT_EQ(controller_->WindowEndUnixMs(), 0);
}

TEST_F(ProfilingControllerTest, NewWindowReplacesTheOldOne) {
  auto first = controller_->Activate(seconds(1));
  ASSERT_TRUE(first);
  auto second = controller_->Activate(seconds(600));
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->window_replaced);
  EXPECT_EQ(second->previous.window_end_unix_ms, first->current.window_end_unix_ms);
  EXPECT_GT(second->current.window_end_unix_ms, first->current.window_end_unix_ms);
  // The first window's end passes without deactivating.
  EXPECT_FALSE(WaitUntil([&] { return !Active(); }, milliseconds(1500)));
}

TEST_F(ProfilingControllerTest, ActivateWithoutWindowCancelsTheWindow) {
  ASSERT_TRUE(controller_->Activate(seconds(1)));
  auto r = controller_->Activate(std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->window_replaced);
  EXPECT_EQ(r->current.window_end_unix_ms, 0);
  EXPECT_FALSE(WaitUntil([&] { return !Active(); }, milliseconds(1500)));
}

TEST_F(ProfilingControllerTest, DeactivateCancelsTheWindow) {
  ASSERT_TRUE(controller_->Activate(seconds(60)));
  auto r = controller_->Deactivate();
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->previous.active);
  EXPECT_GT(r->previous.window_end_unix_ms, 0);
  EXPECT_FALSE(r->current.active);
  EXPECT_EQ(r->current.window_end_unix_ms, 0);
}

TEST_F(ProfilingControllerTest, WindowOutsideBoundsIsRejected) {
  for (auto bad : {milliseconds(999), milliseconds(std::chrono::hours(25))}) {
    auto r = controller_->Activate(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(Active());
}

TEST_F(ProfilingControllerTest, NewSampleIntervalResetsAndIsReported) {
  auto r = controller_->Activate(ActivationRequest{std::nullopt, uint64_t{1} << 20, false});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->previous_sample_interval_bytes, 1024u);
  EXPECT_EQ(r->sample_interval_bytes, uint64_t{1} << 20);
  EXPECT_TRUE(r->samples_reset);
  EXPECT_TRUE(r->current.active);
  EXPECT_EQ(allocator_->Info().sample_interval_bytes, uint64_t{1} << 20);
}

TEST_F(ProfilingControllerTest, TheIntervalInForceResetsNothing) {
  auto r = controller_->Activate(ActivationRequest{std::nullopt, 1024, false});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->samples_reset);
  EXPECT_EQ(r->sample_interval_bytes, 1024u);
  auto plain = controller_->Activate(std::nullopt);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->samples_reset) << "a plain activate never resets";
  EXPECT_EQ(plain->sample_interval_bytes, 1024u);
}

TEST_F(ProfilingControllerTest, ResetDiscardsSamplesAndKeepsTheInterval) {
  ASSERT_TRUE(controller_->Activate(std::nullopt));
  UseUpSampleCountdown();
  auto blocks = AllocateForProfile(256, 4096);
  ASSERT_TRUE(controller_->Deactivate());
  const int64_t before = LiveSampledObjects();
  ASSERT_GE(before, 200) << "the 256 blocks of 4 KiB should nearly all be sampled";
  auto r = controller_->Activate(ActivationRequest{std::nullopt, 0, true});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->samples_reset);
  EXPECT_EQ(r->sample_interval_bytes, 1024u);
  ASSERT_TRUE(controller_->Deactivate());  // nothing new is sampled from here on
  // Only what was sampled between the reset and the deactivate is left.
  EXPECT_LT(LiveSampledObjects(), 50);
  FreeAll(blocks);
}

TEST_F(ProfilingControllerTest, BadSampleIntervalsChangeNothing) {
  for (uint64_t bad : {uint64_t{1000}, uint64_t{1} << 31}) {
    auto r = controller_->Activate(ActivationRequest{std::nullopt, bad, false});
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(Active());
  EXPECT_EQ(allocator_->Info().sample_interval_bytes, 1024u);
}

TEST_F(ProfilingControllerTest, EveryChangeBumpsTheGeneration) {
  const uint64_t start = controller_->Generation();
  EXPECT_NE(start, 0u) << "0 means an agent that does not count";
  auto on = controller_->Activate(std::nullopt);
  ASSERT_TRUE(on);
  EXPECT_EQ(on->generation, start + 1);
  auto again = controller_->Activate(std::nullopt);  // idempotent, but still served
  ASSERT_TRUE(again);
  EXPECT_EQ(again->generation, start + 2);
  auto off = controller_->Deactivate();
  ASSERT_TRUE(off);
  EXPECT_EQ(off->generation, start + 3);
  EXPECT_EQ(controller_->Generation(), start + 3);
}

TEST_F(ProfilingControllerTest, AWindowEndingByItselfBumpsTheGeneration) {
  auto on = controller_->Activate(seconds(1));
  ASSERT_TRUE(on);
  EXPECT_EQ(controller_->Generation(), on->generation);
  EXPECT_TRUE(WaitUntil([&] { return !Active(); }, seconds(5)));
  EXPECT_TRUE(
      WaitUntil([&] { return controller_->Generation() == on->generation + 1; }, seconds(5)))
      << controller_->Generation();
}

TEST_F(ProfilingControllerTest, RequestsThatAreRefusedDoNotBumpTheGeneration) {
  const uint64_t start = controller_->Generation();
  ASSERT_FALSE(controller_->Activate(milliseconds(10)));
  ASSERT_FALSE(controller_->Activate(ActivationRequest{std::nullopt, 1000, false}));
  EXPECT_EQ(controller_->Generation(), start);
}

TEST_F(ProfilingControllerTest, DeactivateIfGenerationSucceedsWhenNobodyChangedIt) {
  auto on = controller_->Activate(seconds(60));
  ASSERT_TRUE(on);
  auto off = controller_->Deactivate(on->generation);
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->current.active);
  EXPECT_EQ(off->generation, on->generation + 1);
  EXPECT_FALSE(Active());
}

TEST_F(ProfilingControllerTest, DeactivateIfGenerationChangesNothingWhenSomeoneElseDid) {
  auto mine = controller_->Activate(seconds(60));
  ASSERT_TRUE(mine);
  auto theirs = controller_->Activate(std::chrono::hours(1));  // someone else's window
  ASSERT_TRUE(theirs);
  auto off = controller_->Deactivate(mine->generation);
  ASSERT_FALSE(off);
  EXPECT_EQ(off.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(off.error().message.find(std::to_string(mine->generation) + " expected, now " +
                                     std::to_string(theirs->generation)),
            std::string::npos)
      << off.error().message;
  EXPECT_TRUE(Active()) << "their activation is left alone";
  EXPECT_EQ(controller_->WindowEndUnixMs(), theirs->current.window_end_unix_ms);
  EXPECT_EQ(controller_->Generation(), theirs->generation) << "a refusal is not a change";
}

TEST_F(ProfilingControllerTest, ActivateIfGenerationIsACompareAndSetToo) {
  auto mine = controller_->Activate(seconds(60));
  ASSERT_TRUE(mine);
  ActivationRequest request{seconds(120), 0, false, mine->generation};
  auto stretched = controller_->Activate(request);
  ASSERT_TRUE(stretched) << stretched.error().message;
  EXPECT_EQ(stretched->generation, mine->generation + 1);
  ASSERT_TRUE(controller_->Deactivate());  // someone else
  const uint64_t now = controller_->Generation();
  request.if_generation = stretched->generation;
  auto refused = controller_->Activate(request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_FALSE(Active()) << "their deactivation is left alone";
  EXPECT_EQ(controller_->WindowEndUnixMs(), 0);
  EXPECT_EQ(controller_->Generation(), now);
}

TEST_F(ProfilingControllerTest, ARefusedConditionalActivateDoesNotResetSamples) {
  ASSERT_TRUE(controller_->Activate(std::nullopt));
  const uint64_t stale = controller_->Generation() - 1;
  auto refused =
      controller_->Activate(ActivationRequest{std::nullopt, uint64_t{1} << 20, true, stale});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(allocator_->Info().sample_interval_bytes, 1024u) << "prof.reset must not have run";
}

// Two clients race to restore with the generation they both saw: exactly one wins.
TEST_F(ProfilingControllerTest, OnlyOneOfTwoRacingConditionalChangesWins) {
  for (int round = 0; round < 50; ++round) {
    auto on = controller_->Activate(seconds(60));
    ASSERT_TRUE(on);
    std::atomic<int> wins{0};
    auto race = [&](bool deactivate) {
      const bool ok =
          deactivate
              ? controller_->Deactivate(on->generation).has_value()
              : controller_->Activate(ActivationRequest{seconds(30), 0, false, on->generation})
                    .has_value();
      if (ok) ++wins;
    };
    std::thread a(race, true), b(race, false);
    a.join();
    b.join();
    EXPECT_EQ(wins.load(), 1) << "round " << round;
    EXPECT_EQ(controller_->Generation(), on->generation + 1);
  }
}

TEST_F(ProfilingControllerTest, DestroyingWithAnOpenWindowDoesNotHang) {
  ASSERT_TRUE(controller_->Activate(std::chrono::hours(1)));
  controller_.reset();
  controller_ = std::make_unique<ProfilingController>(*allocator_);
}

}  // namespace
}  // namespace memprof::agent

namespace memprof::agent {
namespace {

// An idle agent has no window thread: it ends with its window and a new
// window starts another.
TEST_F(ProfilingControllerTest, TheWindowThreadEndsWithItsWindow) {
  ASSERT_EQ(ThreadsNamed("memprof-window"), 0);
  ASSERT_TRUE(controller_->Activate(seconds(1)));
  // The thread names itself as it starts.
  EXPECT_TRUE(WaitUntil([] { return ThreadsNamed("memprof-window") == 1; }, seconds(5)));
  ASSERT_TRUE(WaitUntil([&] { return !Active(); }, seconds(10)));
  EXPECT_TRUE(WaitUntil([] { return ThreadsNamed("memprof-window") == 0; }, seconds(5)))
      << "the window ended, its thread stays";
  ASSERT_TRUE(controller_->Activate(seconds(60)));
  EXPECT_TRUE(WaitUntil([] { return ThreadsNamed("memprof-window") == 1; }, seconds(5)));
  ASSERT_TRUE(controller_->Deactivate());
  EXPECT_TRUE(WaitUntil([] { return ThreadsNamed("memprof-window") == 0; }, seconds(5)))
      << "a deactivated window keeps its thread";
}

TEST_F(ProfilingControllerTest, AnInheritedWindowEndsAtTheParentsEnd) {
  ASSERT_TRUE(controller_->Activate(std::nullopt));
  const int64_t end = NowUnixMs() + 1500;
  controller_->InheritWindow(end);
  EXPECT_EQ(controller_->WindowEndUnixMs(), end);
  EXPECT_TRUE(Active());
  EXPECT_TRUE(WaitUntil([&] { return !Active(); }, seconds(10)));
  EXPECT_GE(NowUnixMs(), end);
}

TEST_F(ProfilingControllerTest, AnInheritedWindowThatEndedAlreadyDeactivatesAtOnce) {
  ASSERT_TRUE(controller_->Activate(std::nullopt));
  const uint64_t generation = controller_->Generation();
  controller_->InheritWindow(NowUnixMs() - 1);
  EXPECT_FALSE(Active());
  EXPECT_EQ(controller_->WindowEndUnixMs(), 0);
  EXPECT_GT(controller_->Generation(), generation);
}

TEST_F(ProfilingControllerTest, NoInheritedWindowWhenNotSampling) {
  controller_->InheritWindow(NowUnixMs() + 60'000);
  EXPECT_FALSE(Active());
  EXPECT_EQ(controller_->WindowEndUnixMs(), 0);
  EXPECT_EQ(ThreadsNamed("memprof-window"), 0);
}

}  // namespace
}  // namespace memprof::agent
