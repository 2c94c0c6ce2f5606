#include "cli/io/stop_wake.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <stop_token>

namespace memprof::cli {
namespace {

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(StopWakeTest, BecomesReadableWhenAStopIsRequested) {
  std::stop_source stop;
  const StopWake wake(stop.get_token());
  ASSERT_GE(wake.fd(), 0);
  EXPECT_FALSE(Readable(wake.fd()));
  stop.request_stop();
  EXPECT_TRUE(Readable(wake.fd()));
}

TEST(StopWakeTest, AStopRequestedBeforeIsReadableAtOnce) {
  std::stop_source stop;
  stop.request_stop();
  const StopWake wake(stop.get_token());
  EXPECT_TRUE(Readable(wake.fd()));
}

TEST(StopWakeTest, ATokenThatCannotStopNeverWakes) {
  const StopWake wake(std::stop_token{});
  ASSERT_GE(wake.fd(), 0);
  EXPECT_FALSE(Readable(wake.fd()));
}

}  // namespace
}  // namespace memprof::cli
