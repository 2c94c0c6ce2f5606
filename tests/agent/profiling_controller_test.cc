#include "agent/profiling_controller.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "agent/dump_streamer.h"
#include "tests/agent/test_allocations.h"
#include "tests/agent/wait_for.h"

namespace memprof::agent {
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
  EXPECT_TRUE(WaitFor([&] { return !Active(); }, seconds(5)));
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
  EXPECT_FALSE(WaitFor([&] { return !Active(); }, milliseconds(1500)));
}

TEST_F(ProfilingControllerTest, ActivateWithoutWindowCancelsTheWindow) {
  ASSERT_TRUE(controller_->Activate(seconds(1)));
  auto r = controller_->Activate(std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->window_replaced);
  EXPECT_EQ(r->current.window_end_unix_ms, 0);
  EXPECT_FALSE(WaitFor([&] { return !Active(); }, milliseconds(1500)));
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

TEST_F(ProfilingControllerTest, DestroyingWithAnOpenWindowDoesNotHang) {
  ASSERT_TRUE(controller_->Activate(std::chrono::hours(1)));
  controller_.reset();
  controller_ = std::make_unique<ProfilingController>(*allocator_);
}

}  // namespace
}  // namespace memprof::agent
