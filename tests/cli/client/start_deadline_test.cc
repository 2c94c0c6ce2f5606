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

}  // namespace
}  // namespace memprof::cli
