#include "cli/collect/debuginfod_progress.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <mutex>
#include <sstream>
#include <string>
#include <thread>

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;
using Clock = DebuginfodProgress::Clock;

// A string stream the drawing thread writes while the test reads it
// (recursive: the base xsputn calls overflow).
class LockedText final : public std::stringbuf {
 public:
  std::string Text() {
    std::lock_guard lock(mutex_);
    return str();
  }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard lock(mutex_);
    return std::stringbuf::xsputn(s, n);
  }
  int_type overflow(int_type c) override {
    std::lock_guard lock(mutex_);
    return std::stringbuf::overflow(c);
  }

 private:
  std::recursive_mutex mutex_;
};

TEST(DebuginfodProgressTest, SilentUntilALookupTakesLongerThanALocalOne) {
  std::ostringstream err;
  DebuginfodProgress progress(err, /*ticking=*/false);
  EXPECT_EQ(progress.LineAt(Clock::now()), "");
  progress.LookupStarted("/usr/lib/x86_64-linux-gnu/libssl.so.3");
  EXPECT_EQ(progress.LineAt(Clock::now()), "");
  EXPECT_EQ(progress.LineAt(Clock::now() + milliseconds(2500)),
            "memprofctl: fetching debug info for libssl.so.3 from debuginfod (2.5 s)");
  progress.LookupFinished("/usr/lib/x86_64-linux-gnu/libssl.so.3");
  EXPECT_EQ(progress.LineAt(Clock::now() + milliseconds(2500)), "");
  EXPECT_EQ(err.str(), "") << "nothing is drawn without the ticker";
}

TEST(DebuginfodProgressTest, NamesTheOldestLookupAndCountsTheOthers) {
  std::ostringstream err;
  DebuginfodProgress progress(err, /*ticking=*/false);
  progress.LookupStarted("/usr/bin/redis-server");
  progress.LookupStarted("/lib/libc.so.6");
  const std::string line = progress.LineAt(Clock::now() + milliseconds(1000));
  EXPECT_NE(line.find("for redis-server from"), std::string::npos) << line;
  EXPECT_NE(line.find(", 1 more waiting)"), std::string::npos) << line;
  progress.LookupFinished("/usr/bin/redis-server");
  EXPECT_NE(progress.LineAt(Clock::now() + milliseconds(1000)).find("libc.so.6"),
            std::string::npos);
}

// Drawn in place while a lookup runs, erased as soon as the last one ends
// (before the report prints), and never once it is gone.
TEST(DebuginfodProgressTest, DrawsInPlaceAndErasesWhenTheLookupsEnd) {
  LockedText text;
  std::ostream err(&text);
  {
    DebuginfodProgress progress(err, /*ticking=*/true);
    progress.LookupStarted("/srv/app");
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (text.Text().find("app from debuginfod") == std::string::npos &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    ASSERT_NE(text.Text().find("\rmemprofctl: fetching debug info for app from debuginfod ("),
              std::string::npos)
        << text.Text();
    progress.LookupFinished("/srv/app");
    const std::string now = text.Text();
    EXPECT_EQ(now.substr(now.size() - 4), "\r\033[K") << "erased at once";
  }
  const std::string all = text.Text();
  EXPECT_EQ(all.substr(all.size() - 4), "\r\033[K");
  EXPECT_EQ(all.find('\n'), std::string::npos);
}

TEST(DebuginfodProgressTest, OnlyOnATerminalAndOnlyWithAServer) {
  std::ostringstream err;
  ::unsetenv("DEBUGINFOD_URLS");
  EXPECT_EQ(DebuginfodProgress::StartIfUseful(err, true), nullptr);
  ::setenv("DEBUGINFOD_URLS", "", 1);
  EXPECT_EQ(DebuginfodProgress::StartIfUseful(err, true), nullptr);
  ::setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
  EXPECT_EQ(DebuginfodProgress::StartIfUseful(err, false), nullptr);
  EXPECT_NE(DebuginfodProgress::StartIfUseful(err, true), nullptr);
  ::unsetenv("DEBUGINFOD_URLS");
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace memprof::cli
