// Tests of the process and directory helpers themselves (Subprocess,
// RunCommand, TempDir), against /bin/sh.
#include "tests/support/subprocess.h"

#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/command_runner.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"

namespace memprof::test_support {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(SubprocessTest, CapturesExitCodeAndBothStreams) {
  CommandResult r = RunCommand({"/bin/sh", "-c", "echo out; echo err >&2; exit 7"}, {});
  EXPECT_EQ(r.exit_code, 7) << r;
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(SubprocessTest, LargeOutputOnBothStreamsDoesNotDeadlock) {
  // 8 MiB on each stream, interleaved: far more than a pipe buffer.
  CommandResult r = RunCommand(
      {"/bin/sh", "-c", "head -c 8388608 /dev/zero & head -c 8388608 /dev/zero >&2; wait"}, {},
      seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), 8388608u);
  EXPECT_EQ(r.err.size(), 8388608u);
}

TEST(SubprocessTest, ReportsDeathBySignalLikeAShell) {
  CommandResult r = RunCommand({"/bin/sh", "-c", "kill -TERM $$"}, {});
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r;
}

TEST(SubprocessTest, EnvironmentIsScrubbedAndExtended) {
  ::setenv("MEMPROF_PID", "1", 1);
  ::setenv("LD_PRELOAD", "/nonexistent.so", 1);
  CommandResult r = RunCommand({"/bin/sh", "-c", "echo \"[$MEMPROF_PID][$LD_PRELOAD][$FOO]\""},
                               {{"FOO", "bar"}});
  ::unsetenv("MEMPROF_PID");
  ::unsetenv("LD_PRELOAD");
  EXPECT_EQ(r.out, "[][][bar]\n") << r;
}

TEST(SubprocessTest, SpawnFailsForMissingProgram) {
  auto proc = Subprocess::Spawn(SpawnOptions{{"/nonexistent/program"}, {}, -1});
  ASSERT_FALSE(proc.has_value());
  EXPECT_NE(proc.error().message.find("/nonexistent/program"), std::string::npos);
}

TEST(SubprocessTest, WaitTimesOutWhileRunningAndDestructorKillsTheGroup) {
  pid_t grandchild = 0;
  {
    auto proc = Subprocess::Spawn(
        SpawnOptions{{"/bin/sh", "-c", "sleep 1000 & echo $! >&3; wait"}, {}, 3});
    ASSERT_TRUE(proc.has_value()) << proc.error().message;
    auto line = (*proc)->WaitForReadyLine(seconds(10));
    ASSERT_TRUE(line.has_value()) << line.error().message;
    grandchild = std::stoi(*line);
    EXPECT_FALSE((*proc)->Wait(milliseconds(50)).has_value());
    EXPECT_TRUE(ProcessAlive(grandchild));
  }
  // The grandchild was SIGKILLed with the group; it is reaped by init, so
  // poll for it to vanish.
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(grandchild); }, seconds(10)));
}

TEST(SubprocessTest, ReadyLineFailsWhenChildExitsFirst) {
  auto proc = Subprocess::Spawn(SpawnOptions{{"/bin/sh", "-c", "exit 3"}, {}, 3});
  ASSERT_TRUE(proc.has_value());
  auto line = (*proc)->WaitForReadyLine(seconds(10));
  EXPECT_FALSE(line.has_value());
  auto status = (*proc)->Wait(seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 3);
}

TEST(SubprocessTest, ReadyFdIsAdvertisedInTheEnvironment) {
  auto proc = Subprocess::Spawn(
      SpawnOptions{{"/bin/sh", "-c", "echo ready >&$MEMPROF_TEST_READY_FD; exec sleep 1000"}, {}, 3});
  ASSERT_TRUE(proc.has_value());
  auto line = (*proc)->WaitForReadyLine(seconds(10));
  ASSERT_TRUE(line.has_value()) << line.error().message;
  EXPECT_EQ(*line, "ready");
  ExitStatus st = (*proc)->KillAndReap();
  EXPECT_EQ(st.term_signal, SIGKILL);
}

TEST(SubprocessTest, StdinPipeCarriesLinesAndClosingItGivesEof) {
  SpawnOptions options{{"/bin/sh", "-c", "read a; echo \"got $a\"; read b || echo eof"}, {}, -1};
  options.stdin_pipe = true;
  auto proc = Subprocess::Spawn(options);
  ASSERT_TRUE(proc.has_value()) << proc.error().message;
  ASSERT_TRUE((*proc)->WriteStdin("hello\n"));
  EXPECT_TRUE(WaitUntil([&] { return (*proc)->StdoutText() == "got hello\n"; }, seconds(10)))
      << (*proc)->StdoutText();
  (*proc)->CloseStdin();
  std::optional<ExitStatus> st = (*proc)->Wait(seconds(10));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->exit_code, 0);
  EXPECT_EQ((*proc)->StdoutText(), "got hello\neof\n");
}

TEST(SubprocessTest, WritingToTheStdinOfAChildThatExitedFailsQuietly) {
  SpawnOptions options{{"/bin/sh", "-c", "exit 0"}, {}, -1};
  options.stdin_pipe = true;
  auto proc = Subprocess::Spawn(options);
  ASSERT_TRUE(proc.has_value()) << proc.error().message;
  ASSERT_TRUE((*proc)->Wait(seconds(10)).has_value());
  // No SIGPIPE (it would kill the test binary): just false.
  EXPECT_FALSE((*proc)->WriteStdin("anyone there?\n"));
  auto no_pipe = Subprocess::Spawn(SpawnOptions{{"/bin/true"}, {}, -1});
  ASSERT_TRUE(no_pipe.has_value());
  EXPECT_FALSE((*no_pipe)->WriteStdin("x\n"));
}

TEST(SubprocessTest, TimedOutCommandIsKilled) {
  auto start = std::chrono::steady_clock::now();
  CommandResult r;
  // RunCommand records a gtest failure on timeout; expect exactly that.
  EXPECT_NONFATAL_FAILURE(r = RunCommand({"/bin/sleep", "1000"}, {}, milliseconds(200)),
                          "did not finish");
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
}

TEST(TempDirTest, IsPrivateAndRemovedRecursively) {
  std::string path;
  {
    auto dir = TempDir::Create("memprof-it-self");
    ASSERT_TRUE(dir.has_value());
    path = dir->path();
    struct stat st{};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ASSERT_EQ(::mkdir(dir->File("sub").c_str(), 0700), 0);
    EXPECT_EQ(dir->List(), std::vector<std::string>{"sub"});
  }
  struct stat st{};
  EXPECT_NE(::stat(path.c_str(), &st), 0);
}

}  // namespace
}  // namespace memprof::test_support
