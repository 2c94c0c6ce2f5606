#include "cli/io/terminal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace memprof::cli {
namespace {

TEST(TerminalTest, DumbUnsetOrEmptyTermCannotRedraw) {
  EXPECT_FALSE(TerminalCanRedraw(nullptr));
  EXPECT_FALSE(TerminalCanRedraw(""));
  EXPECT_FALSE(TerminalCanRedraw("dumb"));
  EXPECT_TRUE(TerminalCanRedraw("xterm-256color"));
  EXPECT_TRUE(TerminalCanRedraw("linux"));
  EXPECT_TRUE(TerminalCanRedraw("screen"));
}

TEST(TerminalTest, APipeNeverRedraws) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const char* saved = std::getenv("TERM");
  const std::string old = saved != nullptr ? saved : "";
  ::setenv("TERM", "xterm", 1);
  EXPECT_FALSE(CanRedraw(fds[1]));
  if (saved != nullptr) {
    ::setenv("TERM", old.c_str(), 1);
  } else {
    ::unsetenv("TERM");
  }
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace memprof::cli
