#include "agent/profiling_controller.h"

#include <gtest/gtest.h>

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
  void TearDown() override { (void)controller_->Deactivate(); }
  bool Active() const { return allocator_->Jemalloc()->ProfilingActive(); }

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

TEST_F(ProfilingControllerTest, DestroyingWithAnOpenWindowDoesNotHang) {
  ASSERT_TRUE(controller_->Activate(std::chrono::hours(1)));
  controller_.reset();
  controller_ = std::make_unique<ProfilingController>(*allocator_);
}

}  // namespace
}  // namespace memprof::agent
