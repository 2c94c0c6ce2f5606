#include "agent/sampler/stack_capture.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "tests/agent/sampler/sampler_test_lib.h"

namespace memprof::agent {
namespace {

using testing::PreloadedTestLib;

TEST(StackCaptureTest, FirstFrameIsTheCaller) {
  ASSERT_TRUE(PrepareStackCapture());
  auto& lib = PreloadedTestLib();
  ASSERT_NE(lib.capture_here, nullptr) << dlerror();
  uintptr_t frames[32];
  const int n = lib.capture_here(frames, 32);
  ASSERT_GE(n, 3);
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(frames[0]), &info), 0);
  EXPECT_EQ(info.dli_saddr, reinterpret_cast<void*>(lib.capture_here));
  // The next frame is this test, in the test executable.
  Dl_info caller{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(frames[1]), &caller), 0);
  EXPECT_NE(caller.dli_fbase, info.dli_fbase);
}

TEST(StackCaptureTest, RespectsMaxAndSkip) {
  auto& lib = PreloadedTestLib();
  uintptr_t all[64];
  const int n = lib.capture_here(all, 64);
  ASSERT_GE(n, 3);
  uintptr_t two[2];
  EXPECT_EQ(lib.capture_here(two, 2), 2);
  EXPECT_EQ(two[0], all[0]);
  uintptr_t skipped[64];
  const int m = CaptureStack(skipped, 64, 1);
  EXPECT_GT(m, 0);
}

}  // namespace
}  // namespace memprof::agent
