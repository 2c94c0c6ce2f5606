// Signal handling, in its own executable: death tests fork, which is only
// safe while the process has a single thread.
#include <gtest/gtest.h>

#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "cli/app/cli_app.h"
#include "cli/io/interrupt_watcher.h"
#include "tests/cli/app/forwarding_client.h"
#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

// Blocks until `stop` is requested (bounded, so a bug fails instead of hanging).
bool WaitForStop(const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return cv.wait_for(lock, stop, std::chrono::seconds(20), [] { return false; }) ||
         stop.stop_requested();
}

bool Blocked(int signal) {
  sigset_t mask;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, signal) == 1;
}

TEST(InterruptWatcherTest, SignalBecomesAStopRequest) {
  auto watcher = InterruptWatcher::Start();
  ASSERT_TRUE(watcher) << watcher.error().message;
  EXPECT_TRUE(Blocked(SIGINT) && Blocked(SIGTERM));
  EXPECT_EQ((*watcher)->received_signal(), 0);
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);  // would kill us were it not watched
  EXPECT_TRUE(WaitForStop((*watcher)->stop_token()));
  EXPECT_EQ((*watcher)->received_signal(), SIGTERM);
  watcher->reset();
  EXPECT_FALSE(Blocked(SIGINT) || Blocked(SIGTERM));  // the mask is restored
}

// Runs `memprofctl dump` through RunCli with a fake agent that sends part of
// a profile, then gets the signal, as Ctrl-C would deliver it mid-stream.
void DumpAndGetSignal(const std::string& root, int signal) {
  testing::FakeProfileClient fake;
  fake.dump_chunks = testing::MakeDumpStream(std::string(100000, 'p'), 4096);
  CliEnvironment env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.proc_root = root + "/proc";
  env.socket_dir = root + "/s";
  env.make_client = [&fake, signal](milliseconds, std::stop_token stop) {
    fake.before_chunk = [stop, signal](size_t i) -> Result<void> {
      if (i != 5) return {};
      ::kill(::getpid(), signal);
      if (!WaitForStop(stop)) return Fail(ErrorCode::kInternal, "stop never requested");
      return Fail(ErrorCode::kCancelled, "cancelled");
    };
    return std::make_unique<testing::ForwardingClient>(fake);
  };
  std::exit(RunCli({"dump", "--pid", "42", "--out", root + "/out/profile.heap"}, env));
}

class InterruptedDumpTest : public ::testing::TestWithParam<int> {
 protected:
  testing::TempDir tmp_;

  void SetUp() override {
    testing::MakeDirs(tmp_.File("out"));
    testing::MakeDirs(tmp_.File("s"));
    testing::MakeProcEntry(tmp_.File("proc"), 42, "demo");
    testing::MakeSocketFile(tmp_.File("s/42.sock"));
  }
};

TEST_P(InterruptedDumpTest, RemovesTheTempFileAndDiesByTheSignal) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const int signal = GetParam();
  EXPECT_EXIT(DumpAndGetSignal(tmp_.path(), signal), ::testing::KilledBySignal(signal),
              "memprofctl: error: dump interrupted; .*profile.heap was not written");
  // The child had written several chunks to .profile.heap.XXXXXX; nothing may remain.
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(tmp_.File("out"))) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_TRUE(left.empty()) << left.front();
}

INSTANTIATE_TEST_SUITE_P(Signals, InterruptedDumpTest, ::testing::Values(SIGINT, SIGTERM));

// Runs `memprofctl profile --duration 1h` through RunCli against a fake agent
// for this very process (so the real window wait watches a live pid). The
// fake's Activate delivers `first` to the process, as Ctrl-C during the window
// would; with `second` != 0, the sixth dump chunk delivers that one too.
void ProfileAndGetSignals(const std::string& root, int first, int second) {
  const pid_t self = ::getpid();
  testing::MakeProcEntry(root + "/proc", self, "demo");
  testing::MakeSocketFile(root + "/s/" + std::to_string(self) + ".sock");
  testing::FakeProfileClient fake;
  fake.status_result.value().set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
  fake.activate_result.value().mutable_current()->set_active(true);
  fake.dump_chunks = testing::MakeDumpStream(std::string(100000, 'p'), 4096);
  fake.on_call = [first](const std::string& rpc) {
    if (rpc == "Activate") ::kill(::getpid(), first);
    if (rpc == "Deactivate") std::cerr << "fake agent: Deactivate\n";
  };
  int clients = 0;
  CliEnvironment env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.proc_root = root + "/proc";
  env.socket_dir = root + "/s";
  env.make_client = [&](milliseconds, std::stop_token stop) {
    if (++clients == 1 && second != 0) {  // the first client is profile's own, not the restore one
      fake.before_chunk = [stop, second](size_t i) -> Result<void> {
        if (i != 5) return {};
        ::kill(::getpid(), second);
        if (!WaitForStop(stop)) return Fail(ErrorCode::kInternal, "abort never requested");
        return Fail(ErrorCode::kCancelled, "cancelled");
      };
    }
    return std::make_unique<testing::ForwardingClient>(fake);
  };
  std::exit(RunCli({"profile", "--pid", std::to_string(self), "--duration", "1h", "--out",
                    root + "/out/profile.heap"},
                   env));
}

class InterruptedProfileTest : public ::testing::TestWithParam<int> {
 protected:
  testing::TempDir tmp_;

  void SetUp() override {
    testing::MakeDirs(tmp_.File("out"));
    testing::MakeDirs(tmp_.File("s"));
    testing::MakeDirs(tmp_.File("proc"));
  }
  std::vector<std::string> Left() const {
    std::vector<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(tmp_.File("out"))) {
      left.push_back(entry.path().filename().string());
    }
    return left;
  }
};

TEST_P(InterruptedProfileTest, FirstSignalEndsTheWindowAndStillWritesTheProfile) {
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(ProfileAndGetSignals(tmp_.path(), GetParam(), 0), ::testing::ExitedWithCode(0),
              "interrupted: profiling window ended after .* of 1h; dumping now.*"
              "fake agent: Deactivate.*profiled for .* of 1h \\(ended early by an interrupt\\)");
  EXPECT_EQ(Left(), std::vector<std::string>{"profile.heap"});
  EXPECT_EQ(testing::ReadFile(tmp_.File("out/profile.heap")), std::string(100000, 'p'));
}

TEST_P(InterruptedProfileTest, SecondSignalAbortsWritesNothingAndDiesByIt) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const int second = GetParam() == SIGINT ? SIGTERM : SIGINT;
  EXPECT_EXIT(ProfileAndGetSignals(tmp_.path(), GetParam(), second),
              ::testing::KilledBySignal(second),
              "fake agent: Deactivate.*memprofctl: error: profile aborted by a second interrupt; "
              ".*profile.heap was not written");
  EXPECT_TRUE(Left().empty()) << Left().front();
}

INSTANTIATE_TEST_SUITE_P(Signals, InterruptedProfileTest, ::testing::Values(SIGINT, SIGTERM));

}  // namespace
}  // namespace memprof::cli
