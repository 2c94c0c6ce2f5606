#include "cli/client/start_deadline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

TEST(StartDeadlineTest, DisarmedInTimeNeverFires) {
  std::atomic<int> fired{0};
  {
    StartDeadline deadline(std::chrono::seconds(30), [&] { ++fired; });
    EXPECT_TRUE(deadline.Disarm());
    EXPECT_FALSE(deadline.expired());
  }  // destroying it does not wait out the 30 s
  EXPECT_EQ(fired.load(), 0);
}

TEST(StartDeadlineTest, FiresOnceWhenNotDisarmed) {
  std::atomic<int> fired{0};
  StartDeadline deadline(milliseconds(50), [&] { ++fired; });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fired.load() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(5));  // polling with a deadline
  }
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(deadline.expired());
  EXPECT_FALSE(deadline.Disarm()) << "too late to disarm";
  EXPECT_EQ(fired.load(), 1);
}

TEST(StartDeadlineTest, DestroyingAnArmedDeadlineDoesNotFire) {
  std::atomic<int> fired{0};
  { StartDeadline deadline(std::chrono::seconds(30), [&] { ++fired; }); }
  EXPECT_EQ(fired.load(), 0);
}

// Progress keeps a deadline from firing for as long as it comes in time;
// once it stops, the deadline fires once. (Each Postpone gives 30 s, so the
// first part holds however slow the machine is.)
TEST(StartDeadlineTest, PostponedWhileProgressComesThenFiresOnce) {
  std::atomic<int> fired{0};
  StartDeadline deadline(std::chrono::seconds(30), [&] { ++fired; });
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(deadline.Postpone(std::chrono::seconds(30)));
  EXPECT_EQ(fired.load(), 0);
  EXPECT_TRUE(deadline.Postpone(milliseconds(50)));  // the last progress
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fired.load() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(5));  // polling with a deadline
  }
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(deadline.expired());
  EXPECT_FALSE(deadline.Postpone(std::chrono::seconds(30))) << "too late for progress";
  EXPECT_EQ(fired.load(), 1);
}

TEST(StartDeadlineTest, PostponingADisarmedDeadlineDoesNotRearmIt) {
  std::atomic<int> fired{0};
  {
    StartDeadline deadline(std::chrono::seconds(30), [&] { ++fired; });
    EXPECT_TRUE(deadline.Disarm());
    EXPECT_TRUE(deadline.Postpone(milliseconds(1)));
    std::this_thread::sleep_for(milliseconds(20));  // would have fired if re-armed
    EXPECT_FALSE(deadline.expired());
  }
  EXPECT_EQ(fired.load(), 0);
}

}  // namespace
}  // namespace memprof::cli
