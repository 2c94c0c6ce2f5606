#include "cli/collect/interval_ticker.h"

#include <gtest/gtest.h>

#include "tests/cli/collect/fake_tick_clock.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(IntervalTickerTest, FirstTickIsImmediateThenOnePerPeriod) {
  testing::FakeTickClock fake;
  const auto start = fake.now;
  IntervalTicker ticker(seconds(10), fake.Clock());
  ASSERT_TRUE(ticker.WaitNext({}));
  EXPECT_TRUE(fake.sleeps.empty());
  ASSERT_TRUE(ticker.WaitNext({}));
  ASSERT_TRUE(ticker.WaitNext({}));
  EXPECT_EQ(fake.sleeps, (std::vector{start + seconds(10), start + seconds(20)}));
}

TEST(IntervalTickerTest, WorkTimeDoesNotMakeThePeriodDrift) {
  testing::FakeTickClock fake;
  const auto start = fake.now;
  IntervalTicker ticker(seconds(10), fake.Clock());
  ASSERT_TRUE(ticker.WaitNext({}));
  fake.now += seconds(3);  // the work takes 3 s
  ASSERT_TRUE(ticker.WaitNext({}));
  EXPECT_EQ(fake.sleeps.back(), start + seconds(10)) << "due at start + 10 s, not 13 s";
}

TEST(IntervalTickerTest, OverrunningWorkSkipsMissedTicksInsteadOfBursting) {
  testing::FakeTickClock fake;
  const auto start = fake.now;
  IntervalTicker ticker(seconds(10), fake.Clock());
  ASSERT_TRUE(ticker.WaitNext({}));
  fake.now += seconds(35);  // missed the ticks at 10 s and 20 s; 30 s is due
  ASSERT_TRUE(ticker.WaitNext({}));
  EXPECT_TRUE(fake.sleeps.empty()) << "the latest due tick runs at once";
  EXPECT_EQ(ticker.skipped(), 2u);
  ASSERT_TRUE(ticker.WaitNext({}));
  EXPECT_EQ(fake.sleeps.back(), start + seconds(40));
}

TEST(IntervalTickerTest, LateByLessThanAPeriodRunsAtOnceWithoutSkipping) {
  testing::FakeTickClock fake;
  IntervalTicker ticker(seconds(10), fake.Clock());
  ASSERT_TRUE(ticker.WaitNext({}));
  fake.now += seconds(12);
  ASSERT_TRUE(ticker.WaitNext({}));
  EXPECT_TRUE(fake.sleeps.empty());
  EXPECT_EQ(ticker.skipped(), 0u);
}

TEST(IntervalTickerTest, StopEndsTheWaitAndEveryLaterOne) {
  testing::FakeTickClock fake;
  std::stop_source stop;
  fake.on_sleep = [&stop] { stop.request_stop(); };
  IntervalTicker ticker(seconds(10), fake.Clock());
  ASSERT_TRUE(ticker.WaitNext(stop.get_token()));
  EXPECT_FALSE(ticker.WaitNext(stop.get_token()));
  EXPECT_FALSE(ticker.WaitNext(stop.get_token()));
  EXPECT_EQ(fake.sleeps.size(), 1u);
}

TEST(IntervalTickerTest, SteadyClockSleepEndsAtOnceOnStop) {
  TickClock clock = SteadyTickClock();
  std::stop_source stop;
  stop.request_stop();
  // Would sleep for an hour if the stop were not seen.
  EXPECT_FALSE(clock.sleep_until(clock.now() + std::chrono::hours(1), stop.get_token()));
  EXPECT_TRUE(clock.sleep_until(clock.now() + milliseconds(1), std::stop_token()));
}

}  // namespace
}  // namespace memprof::cli
