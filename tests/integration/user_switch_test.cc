// A service that changes its user while it runs, as varnishd does
// (tests/testprogs/user_switching_host.c): its manager, started as root,
// spends its time as the service user and becomes root only for moments,
// and glibc applies each switch to every thread, the agent's too; its worker
// drops root for good. The agent must keep its socket where the process
// published it (re-creating it after the host closed it, whatever user the
// host is at that moment), the worker must get an agent of its own as the
// service user, and when they exit, nothing of ours may be left in the
// socket directory. Root only (the CI runs as root); skipped otherwise.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/integration/harness/test_user.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::seconds;

constexpr const char* kUserSwitchingHost = MEMPROF_IT_USER_SWITCHING_HOST;
// How often the host closes every descriptor while gRPC serves in the agent.
constexpr int kPurges = 10;
class UserSwitchTest : public GuestTest {
 protected:
  void SetUp() override {
    GuestTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    auto user = EnsureTestUser();
    if (!user) GTEST_SKIP() << "user-switching tests skipped: " << user.error().message;
    user_ = *user;
  }

  // Starts the host (the socket directory as it is now) and has it fork its
  // worker.
  void StartHost() {
    TargetOptions options;
    options.argv = {kUserSwitchingHost, std::to_string(user_.uid), std::to_string(user_.gid)};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", kProfilingReadyConf},
                   {"MEMPROF_LOG_LEVEL", "warning"}};
    options.stdin_pipe = true;
    // The host closes its descriptors at "go", before anyone talks to the
    // agent: wait for the socket file without connecting to it.
    options.connect_to_agent = false;
    host_ = Start(options);
    ASSERT_NE(host_, nullptr);
    Command("go");
    auto report = AwaitStdout(*host_, std::regex(R"(worker (\d+)\n)"));
    ASSERT_EQ(report.size(), 1u) << HostOutput();
    worker_ = std::stoi(report[0][0]);
  }

  // The host in the default directory's shape (/tmp/memprof: root's,
  // 01777), running as root until told to drop it.
  void StartInStickyDirectory() {
    ASSERT_EQ(::chmod(SocketDir().c_str(), 01777), 0);
    TargetOptions options;
    options.argv = {kUserSwitchingHost, std::to_string(user_.uid), std::to_string(user_.gid)};
    options.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}};
    options.stdin_pipe = true;
    host_ = Start(options);
    ASSERT_NE(host_, nullptr);
  }

  // The host gives up root for the service user, for good.
  void DropRoot() {
    Command("drop");
    ASSERT_EQ(AwaitStdout(*host_, std::regex("dropped\n")).size(), 1u) << HostOutput();
  }

  void Command(const std::string& line) {
    ASSERT_TRUE(host_->process().WriteStdin(line + "\n")) << line << HostOutput();
  }

  std::string HostOutput() const {
    return "\n--- host stdout ---\n" + host_->process().StdoutText() + "\n--- host stderr ---\n" +
           host_->process().StderrText();
  }

  // What the agents may leave in the socket directory: sockets, and the
  // private directories (".m...") they bind them in.
  std::vector<std::string> AgentEntries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(SocketDir())) {
      const std::string name = entry.path().filename();
      if (name.ends_with(".sock") || name.starts_with(".m")) names.push_back(name);
    }
    return names;
  }

  // The host's "count" reply: the switches the kernel refused must be none.
  void ExpectEverySwitchSucceeded() {
    Command("count");
    auto counts = AwaitStdout(*host_, std::regex(R"(switches (\d+) failures (\d+)\n)"));
    ASSERT_EQ(counts.size(), 1u) << HostOutput();
    EXPECT_GT(std::stol(counts[0][0]), 0) << HostOutput();
    EXPECT_EQ(counts[0][1], "0") << HostOutput();
  }

  // SIGTERM: the host stops as the service user; it must exit normally.
  void StopHost() {
    std::optional<ExitStatus> exit = host_->Terminate();
    ASSERT_TRUE(exit.has_value()) << "no exit within 20 s of SIGTERM" << HostOutput();
    EXPECT_EQ(exit->ShellCode(), 0) << "(128 + signal when killed)" << HostOutput();
  }

  TestUser user_;
  TargetProcess* host_ = nullptr;
  pid_t worker_ = 0;
};

// The default directory's shape (/tmp/memprof: root's, 01777), where the
// manager's socket is root's and the worker's the service user's.
TEST_F(UserSwitchTest, ManagerAndWorkerAreServedAndLeaveNothingBehind) {
  ASSERT_EQ(::chmod(SocketDir().c_str(), 01777), 0);
  StartHost();
  ASSERT_FALSE(HasFatalFailure());
  const pid_t manager = host_->pid();
  // The agent finds its socket closed when this connection wakes it and
  // publishes a new one, while the host switches users; the CLI retries the
  // connection it lost.
  CommandResult status = Cli({"status", "--pid", std::to_string(manager), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status << HostOutput();
  struct stat st{};
  ASSERT_EQ(::lstat(SocketOf(manager).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the manager's socket is published as the user it started as";
  const std::string heap = dir().File("manager.heap");
  CommandResult dump = Cli({"dump", "--pid", std::to_string(manager), "--out", heap});
  ASSERT_EQ(dump.exit_code, 0) << dump << HostOutput();

  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker_)); }, seconds(10)))
      << "the worker (pid " << worker_ << ") never served " << SocketOf(worker_) << HostOutput();
  ASSERT_EQ(::lstat(SocketOf(worker_).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid) << "the worker's socket belongs to the user it runs as";
  CommandResult activate = Cli({"activate", "--pid", std::to_string(worker_)});
  ASSERT_EQ(activate.exit_code, 0) << activate << HostOutput();
  const std::string report = DumpUntilReportNames(worker_, "WorkerKeepsCache");
  EXPECT_NE(report.find("WorkerKeepsCache"), std::string::npos) << report << HostOutput();
  ExpectEverySwitchSucceeded();
  EXPECT_EQ(host_->process().StderrText(), "") << "the agents had nothing to warn about";

  StopHost();
  EXPECT_TRUE(WaitUntil([&] { return AgentEntries().empty(); }, seconds(10)))
      << ::testing::PrintToString(AgentEntries()) << HostOutput();
}

// A custom directory of root's (0700): the worker, no longer root, cannot
// publish there and says so, with what to do; the manager is served, and
// nothing is left behind.
TEST_F(UserSwitchTest, AWorkerThatCannotWriteTheDirectorySaysWhy) {
  StartHost();
  ASSERT_FALSE(HasFatalFailure());
  const std::string expected = "is not writable by uid " + std::to_string(user_.uid);
  ASSERT_TRUE(WaitUntil(
      [&] { return host_->process().StderrText().find(expected) != std::string::npos; },
      seconds(10)))
      << HostOutput();
  EXPECT_NE(host_->process().StderrText().find("such as the default /tmp/memprof"),
            std::string::npos)
      << HostOutput();
  EXPECT_FALSE(IsSocketFile(SocketOf(worker_)));
  // memprofctl finds the same from outside: the worker's user may not write
  // the directory its agent was to publish in.
  const std::string w = std::to_string(worker_);
  ExpectCliError(Cli({"status", "--pid", w}), 5,
                 "memprof agent loaded but not serving: socket directory " + SocketDir() +
                     " is not writable by uid " + std::to_string(user_.uid));
  ExpectServed(host_->pid());
  ExpectEverySwitchSucceeded();
  StopHost();
  EXPECT_TRUE(WaitUntil([&] { return AgentEntries().empty(); }, seconds(10)))
      << ::testing::PrintToString(AgentEntries()) << HostOutput();
}

// A service that starts as root and drops to its user for good in the same
// process (named -u bind): its agent published the socket as root, and
// hands it over to the service's user just before root is gone
// (user_change_hooks.cc). The service's own user is then served, and the
// process removes its socket when it exits, though it is no longer root.
TEST_F(UserSwitchTest, AServiceThatDropsRootHandsItsSocketToItsUser) {
  StartInStickyDirectory();
  ASSERT_FALSE(HasFatalFailure());
  struct stat st{};
  ASSERT_EQ(::lstat(SocketOf(host_->pid()).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "published while the process is root";
  DropRoot();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(::lstat(SocketOf(host_->pid()).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid) << "handed over to the user the process became";
  EXPECT_EQ(st.st_gid, user_.gid);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "still its owner's only";
  const std::string p = std::to_string(host_->pid());
  const std::vector<std::string> as_user = user_.Wrap({kMemprofctl, "status", "--pid", p, "--json"});
  CommandResult served = RunCommand(as_user, {{"MEMPROF_SOCKET_DIR", SocketDir()}});
  ASSERT_EQ(served.exit_code, 0) << served << HostOutput();
  EXPECT_EQ(ParseJsonOutput(served)["uid"], user_.uid);
  // Served, but the kernel keeps /proc/N/smaps root's (not dumpable).
  const std::vector<std::string> doctor = user_.Wrap({kMemprofctl, "doctor", "--pid", p});
  ExpectCliError(RunCommand(doctor, {{"MEMPROF_SOCKET_DIR", SocketDir()}}), 4,
                 "cannot read /proc/" + p + "/smaps: the kernel keeps it for root, as for every "
                 "process that changed its user after it started");
  CommandResult root = Cli({"status", "--pid", p, "--json"});
  ASSERT_EQ(root.exit_code, 0) << root;
  CommandResult list = Cli({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  const nlohmann::json targets = ParseJsonOutput(list)["targets"];
  ASSERT_EQ(targets.size(), 1u) << list;
  EXPECT_EQ(targets[0]["uid"], user_.uid) << "list shows the same user as status";
  EXPECT_EQ(targets[0]["real_uid"], user_.uid);
  StopHost();
  EXPECT_FALSE(::lstat(SocketOf(host_->pid()).c_str(), &st) == 0)
      << "the process removed its socket at exit" << HostOutput();
  EXPECT_TRUE(AgentEntries().empty()) << ::testing::PrintToString(AgentEntries());
}

// A dump as a user the kernel does not let open the process's files (it
// changed its user, so it is not dumpable) comes over the socket; root's
// is copied out of the agent's file (docs/protocol.md, "Dump"). Both are
// whole profiles.
TEST_F(UserSwitchTest, ADumpReachesAUserWhoCannotOpenTheProcessFiles) {
  StartInStickyDirectory();
  ASSERT_FALSE(HasFatalFailure());
  DropRoot();
  ASSERT_FALSE(HasFatalFailure());
  const std::string p = std::to_string(host_->pid());
  const std::vector<std::string> as_user =
      user_.Wrap({kMemprofctl, "-vv", "dump", "--pid", p, "--out", "-"});
  CommandResult streamed = RunCommand(as_user, {{"MEMPROF_SOCKET_DIR", SocketDir()}});
  ASSERT_EQ(streamed.exit_code, 0) << streamed << HostOutput();
  EXPECT_TRUE(streamed.out.starts_with("heap_v2/")) << streamed.out.substr(0, 100);
  EXPECT_NE(streamed.out.find("\nMAPPED_LIBRARIES:\n"), std::string::npos);
  EXPECT_EQ(streamed.err.find("the agent's file"), std::string::npos) << streamed.err;
  CommandResult copied = Cli({"-vv", "dump", "--pid", p, "--out", "-"});
  ASSERT_EQ(copied.exit_code, 0) << copied << HostOutput();
  EXPECT_TRUE(copied.out.starts_with("heap_v2/")) << copied.out.substr(0, 100);
  EXPECT_NE(copied.out.find("\nMAPPED_LIBRARIES:\n"), std::string::npos);
  EXPECT_NE(copied.err.find("copying the profile out of the agent's file, /proc/" + p + "/task/"),
            std::string::npos)
      << copied.err;
  StopHost();
}

// The host closes every descriptor again and again while the agent's gRPC
// is up (a client in the last MEMPROF_IDLE_TIMEOUT) and after it went idle:
// gRPC's epoll sets and eventfds are in the agent's own descriptor table, out
// of the host's reach, so the host keeps running, the agent keeps serving,
// and nothing is printed on the host's stderr.
TEST_F(UserSwitchTest, ClosingEveryDescriptorWhileGrpcRunsHarmsNeither) {
  ASSERT_EQ(::chmod(SocketDir().c_str(), 01777), 0);
  StartHost();
  ASSERT_FALSE(HasFatalFailure());
  const std::string manager = std::to_string(host_->pid());
  for (int i = 1; i <= kPurges; ++i) {
    CommandResult status = Cli({"status", "--pid", manager, "--json"});
    ASSERT_EQ(status.exit_code, 0) << "before purge " << i << ": " << status << HostOutput();
    Command("purge");
    ASSERT_EQ(AwaitStdout(*host_, std::regex("purged\n"), i).size(), size_t(i)) << HostOutput();
  }
  const std::string heap = dir().File("manager.heap");
  CommandResult dump = Cli({"dump", "--pid", manager, "--out", heap});
  ASSERT_EQ(dump.exit_code, 0) << dump << HostOutput();
  ExpectEverySwitchSucceeded();
  EXPECT_EQ(host_->process().StderrText(), "");
  StopHost();
  EXPECT_TRUE(WaitUntil([&] { return AgentEntries().empty(); }, seconds(10)))
      << ::testing::PrintToString(AgentEntries()) << HostOutput();
}

}  // namespace
}  // namespace memprof::integration
