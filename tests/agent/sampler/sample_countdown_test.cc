#include "agent/sampler/sample_countdown.h"

#include <gtest/gtest.h>

#include <cmath>

namespace memprof::agent {
namespace {

TEST(SampleCountdownTest, GapsAreExponentialWithTheInterval) {
  SampleCountdown c;
  c.Seed(42);
  constexpr uint64_t kMean = 512 * 1024;
  constexpr int kDraws = 200000;
  double sum = 0;
  double sum_squares = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double gap = static_cast<double>(c.NextGap(kMean));
    ASSERT_GE(gap, 1.0);
    sum += gap;
    sum_squares += gap * gap;
  }
  const double mean = sum / kDraws;
  const double stddev = std::sqrt(sum_squares / kDraws - mean * mean);
  // Standard error of the mean is mean/sqrt(200000) = 0.22%; 2% is ~9 sigma.
  EXPECT_NEAR(mean, kMean, kMean * 0.02);
  // An exponential distribution's standard deviation equals its mean.
  EXPECT_NEAR(stddev, kMean, kMean * 0.03);
}

TEST(SampleCountdownTest, SamplesOnceEveryIntervalOfBytes) {
  SampleCountdown c;
  constexpr uint64_t kMean = 64 * 1024;
  EXPECT_FALSE(c.Account(1, kMean));  // the first allocation seeds, and 1 byte is no gap
  uint64_t samples = 0;
  constexpr uint64_t kBytes = uint64_t{4} << 30;
  for (uint64_t done = 0; done < kBytes; done += 256) samples += c.Account(256, kMean) ? 1 : 0;
  const double expected = static_cast<double>(kBytes) / kMean;  // 65536
  EXPECT_NEAR(static_cast<double>(samples), expected, expected * 0.03);
}

TEST(SampleCountdownTest, ThreadsSeededApartDrawApart) {
  SampleCountdown a;
  SampleCountdown b;
  a.Seed(1);
  b.Seed(2);
  int same = 0;
  for (int i = 0; i < 100; ++i) same += a.NextGap(1000000) == b.NextGap(1000000) ? 1 : 0;
  EXPECT_LT(same, 5);
}

TEST(SampleCountdownTest, HugeAllocationsAreAlwaysSampled) {
  SampleCountdown c;
  c.Seed(7);
  c.bytes_until_sample = c.NextGap(512 * 1024);
  EXPECT_TRUE(c.Account(size_t{1} << 40, 512 * 1024));
}

}  // namespace
}  // namespace memprof::agent
