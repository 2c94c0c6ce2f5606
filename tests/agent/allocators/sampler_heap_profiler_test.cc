// SamplerHeapProfiler over the real sampler, in agent_sampler_tests (glibc
// malloc; the sampler patches the test executable there).
#include "agent/allocators/sampler_heap_profiler.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "agent/sampler/sampler.h"

namespace memprof::agent {
namespace {

std::string FileText(int fd) {
  std::string text(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
  EXPECT_EQ(pread(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  return text;
}

class SamplerHeapProfilerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    (void)profiler_.SetActive(false);
    Sampler::Reset();
  }
  SamplerHeapProfiler profiler_{/*skip_own_module=*/false};
};

TEST_F(SamplerHeapProfilerTest, ActivationIsTheSamplers) {
  EXPECT_STREQ(profiler_.Format(), "jemalloc_heap_v2");
  EXPECT_EQ(profiler_.SampleInterval(), 524288u);
  EXPECT_FALSE(profiler_.Active());
  auto previous = profiler_.SetActive(true);
  ASSERT_TRUE(previous);
  EXPECT_FALSE(*previous);
  EXPECT_TRUE(profiler_.Active());
  EXPECT_TRUE(Sampler::Status().active);
  EXPECT_GT(Sampler::Status().patched_slots, 0u);
  previous = profiler_.SetActive(true);  // twice: idempotent
  ASSERT_TRUE(previous);
  EXPECT_TRUE(*previous);
  previous = profiler_.SetActive(false);
  ASSERT_TRUE(previous);
  EXPECT_TRUE(*previous);
  EXPECT_FALSE(Sampler::Status().active);
  ASSERT_TRUE(profiler_.Reset(std::nullopt));
  EXPECT_EQ(Sampler::Status().patched_slots, 0u);
}

TEST_F(SamplerHeapProfilerTest, ResetSetsTheIntervalAndDropsSamples) {
  ASSERT_TRUE(profiler_.Reset(12));
  EXPECT_EQ(profiler_.SampleInterval(), 4096u);
  ASSERT_TRUE(profiler_.SetActive(true));
  EXPECT_EQ(Sampler::Status().sample_interval, 4096u);
  volatile size_t big = size_t{64} << 20;
  void* kept = std::malloc(big);  // sampled at any interval this small
  EXPECT_TRUE(Sampler::IsLiveSample(kept));
  ASSERT_TRUE(profiler_.Reset(std::nullopt));
  EXPECT_FALSE(Sampler::IsLiveSample(kept));
  EXPECT_EQ(profiler_.SampleInterval(), 4096u);
  std::free(kept);
  EXPECT_FALSE(profiler_.Reset(41));  // refused, not shifted past 64 bits
}

TEST_F(SamplerHeapProfilerTest, WritesAHeapV2ProfileWithItsInterval) {
  ASSERT_TRUE(profiler_.Reset(16));
  ASSERT_TRUE(profiler_.SetActive(true));
  volatile size_t big = size_t{64} << 20;
  void* kept = std::malloc(big);
  const int fd = memfd_create("profile", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto size = profiler_.WriteInto(fd);
  ASSERT_TRUE(size) << size.error().message;
  const std::string text = FileText(fd);
  EXPECT_EQ(*size, text.size());
  EXPECT_TRUE(text.starts_with("heap_v2/65536\n")) << text.substr(0, 40);
  EXPECT_NE(text.find(": 67108864 [0: 0]\n"), std::string::npos);
  EXPECT_NE(text.find("\nMAPPED_LIBRARIES:\n"), std::string::npos);
  close(fd);
  std::free(kept);
}

TEST_F(SamplerHeapProfilerTest, WriteFailureIsAnError) {
  ASSERT_TRUE(profiler_.SetActive(true));
  auto size = profiler_.WriteInto(-1);
  ASSERT_FALSE(size);
  EXPECT_EQ(size.error().code, ErrorCode::kInternal);
}

}  // namespace
}  // namespace memprof::agent
