// A service that runs helper programs (tests/testprogs/exec_host.c): fork()
// and exec() with the service's environment, LD_PRELOAD included, and its own
// stdout/stderr. By default (MEMPROF_CHILDREN=none) the helpers get no agent;
// with MEMPROF_CHILDREN=inherit they do. A process that exec()s in place keeps
// its agent. Whatever happens, an agent writes nothing to the service's output
// unless MEMPROF_LOG_LEVEL is set, and once the service and its helpers have
// exited (normally, through _exit, or by exec) `memprofctl list` shows no stale
// entry (docs/contract.md rules 7 and 9).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::regex kRanLine(R"(ran (\d+) status (\d+)\n)");
const std::regex kStartedLine(R"(started (\d+)\n)");
const std::regex kStoppedLine(R"(stopped (\d+) status (\d+)\n)");
// Everything the host and its helpers write: any other byte is someone else's.
const std::regex kExpectedLine(
    R"((ran|stopped) \d+ status \d+|started \d+|helper (alloc|_exit|exec|serve)|script start)");

class ExecChildrenTest : public GuestTest {
 protected:
  TargetProcess* StartHost(std::map<std::string, std::string> env = {},
                           std::vector<std::string> argv = {kExecHost}) {
    TargetOptions options;
    options.argv = std::move(argv);
    options.env = std::move(env);
    options.env["LD_PRELOAD"] = kAgentPreload;
    options.env["MALLOC_CONF"] = kProfilingReadyConf;
    options.stdin_pipe = true;
    host_ = Start(options);
    return host_;
  }

  std::string HostOutput() const {
    return "\n--- host stdout ---\n" + host_->process().StdoutText() + "\n--- host stderr ---\n" +
           host_->process().StderrText();
  }

  // Sends a command line to the host.
  void Send(const std::vector<std::string>& words) {
    std::string line;
    for (const std::string& w : words) line += (line.empty() ? "" : " ") + w;
    ASSERT_TRUE(host_->process().WriteStdin(line + "\n")) << HostOutput();
  }

  // `run ARGV...` and its result; the helper must exit with 0.
  void Run(const std::vector<std::string>& argv) {
    std::vector<std::string> words = {"run"};
    words.insert(words.end(), argv.begin(), argv.end());
    ASSERT_NO_FATAL_FAILURE(Send(words));
    auto ran = AwaitStdout(*host_, kRanLine, ++runs_);
    ASSERT_EQ(ran.size(), runs_);
    EXPECT_EQ(ran.back()[1], "0") << JoinArgv(argv) << HostOutput();
  }

  // Every kind of helper a service runs: a system binary, a program that
  // exits normally, one that _exits, one that execs another in place, and a
  // shell script that runs a program and then execs one.
  void RunEveryHelper() {
    ASSERT_NO_FATAL_FAILURE(Run({"/bin/true"}));
    ASSERT_NO_FATAL_FAILURE(Run({kExecHelper, "alloc"}));
    ASSERT_NO_FATAL_FAILURE(Run({kExecHelper, "_exit"}));
    ASSERT_NO_FATAL_FAILURE(Run({kExecHelper, "exec", kExecHelper, "alloc"}));
    ASSERT_NO_FATAL_FAILURE(Run({"/bin/sh", kExecHelperScript, kExecHelper}));
  }

  // `start` a long-lived helper; its pid once it is up and has allocated.
  pid_t StartServingHelper() {
    const size_t serving = StdoutMatches(*host_, std::regex(R"(helper serve\n)")).size();
    Send({"start", kExecHelper, "serve"});
    auto started = AwaitStdout(*host_, kStartedLine, ++starts_);
    AwaitStdout(*host_, std::regex(R"(helper serve\n)"), serving + 1);
    return started.size() == starts_ ? std::stoi(started.back()[0]) : 0;
  }

  void StopHelper(pid_t pid) {
    Send({"stop", std::to_string(pid)});
    auto stopped = AwaitStdout(*host_, kStoppedLine, ++stops_);
    ASSERT_EQ(stopped.size(), stops_);
    EXPECT_EQ(stopped.back()[0], std::to_string(pid));
    EXPECT_EQ(stopped.back()[1], "0") << HostOutput();
  }

  // Not a byte from an agent: stderr is empty and stdout holds only what the
  // host and its helpers write.
  void ExpectNothingFromTheAgent() {
    EXPECT_EQ(host_->process().StderrText(), "") << HostOutput();
    std::istringstream lines(host_->process().StdoutText());
    for (std::string line; std::getline(lines, line);) {
      EXPECT_TRUE(std::regex_match(line, kExpectedLine))
          << "unexpected output line '" << line << "'" << HostOutput();
    }
    EXPECT_EQ(host_->process().StdoutText().find("memprof"), std::string::npos) << HostOutput();
  }

  // `list` shows the host alone, and the directory holds its socket alone.
  void ExpectOnlyTheHostListed() {
    const nlohmann::json targets = ListTargets();
    EXPECT_EQ(ListedPids(targets), std::vector<pid_t>{host_->pid()}) << targets.dump(2);
    EXPECT_EQ(SocketNames(), std::vector<std::string>{SocketName(host_->pid())});
  }

  TargetProcess* host_ = nullptr;
  size_t runs_ = 0;
  size_t starts_ = 0;
  size_t stops_ = 0;
};

TEST_F(ExecChildrenTest, ByDefaultHelpersGetNoAgentAndNothingIsPrintedOrLeftBehind) {
  ASSERT_NE(StartHost(), nullptr);
  ASSERT_NO_FATAL_FAILURE(RunEveryHelper());
  // No helper ever had an agent: not even the one that _exited left a socket.
  EXPECT_EQ(SocketNames(), std::vector<std::string>{SocketName(host_->pid())});
  const pid_t helper = StartServingHelper();
  ASSERT_GT(helper, 0);
  // It would have published its socket by now if it had an agent; give it a
  // generous moment anyway, polling.
  EXPECT_FALSE(WaitUntil([&] { return FileExists(SocketOf(helper)); }, milliseconds(1500)))
      << "helper " << helper << " (exec'd by the host) has an agent";
  ExpectOnlyTheHostListed();
  ASSERT_NO_FATAL_FAILURE(StopHelper(helper));
  ExpectOnlyTheHostListed();
  ExpectNothingFromTheAgent();
  ExpectServed(host_->pid());
}

TEST_F(ExecChildrenTest, WithChildrenInheritALongLivedHelperIsListedAndNothingIsPrinted) {
  ASSERT_NE(StartHost({{"MEMPROF_CHILDREN", "inherit"}}), nullptr);
  ASSERT_NO_FATAL_FAILURE(RunEveryHelper());
  // A helper whose agent cannot start (its socket directory cannot exist)
  // must stay as silent as one that should not start.
  ASSERT_NO_FATAL_FAILURE(
      Run({"/usr/bin/env", "MEMPROF_SOCKET_DIR=/dev/null/memprof", kExecHelper, "alloc"}));
  const pid_t helper = StartServingHelper();
  ASSERT_GT(helper, 0);
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(helper)); }, seconds(10)))
      << "helper " << helper << " never served " << SocketOf(helper) << HostOutput();
  ExpectServed(helper);
  const nlohmann::json targets = ListTargets();
  auto entry = FindTarget(targets, helper);
  ASSERT_TRUE(entry.has_value()) << targets.dump(2);
  EXPECT_EQ(Field(*entry, "ppid"), host_->pid()) << entry->dump(2);
  ASSERT_NO_FATAL_FAILURE(StopHelper(helper));
  // Every helper has exited, however it did: no stale entry.
  ExpectOnlyTheHostListed();
  ExpectNothingFromTheAgent();
}

TEST_F(ExecChildrenTest, AServiceThatExecsInPlaceKeepsItsAgent) {
  // A wrapper script that execs the service (same pid), and the service
  // later execing another program in place: the pid keeps an agent.
  ASSERT_NE(StartHost({}, {"/bin/sh", "-c", "exec \"$0\"", kExecHost}), nullptr);
  auto executable_is = [&](const std::string& name) {
    return WaitUntil(
        [&] {
          CommandResult r = Cli({"status", "--pid", std::to_string(host_->pid()), "--json"});
          if (r.exit_code != 0) return false;
          nlohmann::json j = ParseJsonOutput(r);
          return j["executable"].is_string() && j["executable"].get<std::string>().ends_with(name);
        },
        seconds(20));
  };
  ASSERT_TRUE(executable_is("/exec_host")) << HostOutput();
  Send({"exec", kExecHelper, "serve"});
  AwaitStdout(*host_, std::regex(R"(helper serve\n)"));
  EXPECT_TRUE(executable_is("/exec_helper")) << HostOutput();
  ExpectOnlyTheHostListed();
  ExpectNothingFromTheAgent();
  std::optional<ExitStatus> exit = host_->Terminate();
  ASSERT_TRUE(exit.has_value()) << "no exit within 20 s of SIGTERM" << HostOutput();
  EXPECT_EQ(exit->ShellCode(), 0) << "(128 + signal when killed)" << HostOutput();
  EXPECT_EQ(SocketNames(), std::vector<std::string>{});
}

// How the service ends: returning from main, _exit(), or exec() of a program
// that exits at once.
class ExecChildrenExitTest : public ExecChildrenTest,
                             public ::testing::WithParamInterface<std::vector<std::string>> {};

TEST_P(ExecChildrenExitTest, NoStaleEntryAfterTheServiceAndItsHelpersExit) {
  ASSERT_NE(StartHost(), nullptr);
  ASSERT_NO_FATAL_FAILURE(Run({kExecHelper, "alloc"}));
  ASSERT_NO_FATAL_FAILURE(Run({kExecHelper, "_exit"}));
  ExpectServed(host_->pid());
  Send(GetParam());
  std::optional<ExitStatus> exit = host_->process().Wait(seconds(20));
  ASSERT_TRUE(exit.has_value()) << "the host did not exit" << HostOutput();
  EXPECT_EQ(exit->ShellCode(), 0) << "(128 + signal when killed)" << HostOutput();
  // `list` shows nothing, and whatever the agent could not remove (after
  // _exit nothing runs) is gone once `list` has seen the process is dead.
  const nlohmann::json targets = ListTargets();
  EXPECT_EQ(targets, nlohmann::json::array()) << targets.dump(2);
  EXPECT_EQ(SocketNames(), std::vector<std::string>{});
  ExpectNothingFromTheAgent();
}

std::string ExitName(const ::testing::TestParamInfo<std::vector<std::string>>& exit) {
  if (exit.param[0] == "exit") return "Exit";
  if (exit.param[0] == "_exit") return "UnderscoreExit";
  return "ExecTrue";
}

INSTANTIATE_TEST_SUITE_P(Exits, ExecChildrenExitTest,
                         ::testing::Values(std::vector<std::string>{"exit"},
                                           std::vector<std::string>{"_exit"},
                                           std::vector<std::string>{"exec", "/bin/true"}),
                         ExitName);

}  // namespace
}  // namespace memprof::integration
