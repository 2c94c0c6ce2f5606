// A host that closes every descriptor it inherited (close_range(3, ~0U)) after
// the preloaded agent opened its socket, then opens its own sockets on the
// numbers the agent used and forks a child that serves them too (docs/contract.md
// rule 9). The agent must never use or close a descriptor it cannot
// prove is still its own, must notice the loss at its next wake-up and
// re-create its socket at the same path, and the child must get an agent of
// its own without touching anything of the parent's.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kRequestTimeout = seconds(5);
// Requests each of parent and child must serve, and how long they may take.
constexpr int kRequestsEach = 25;
constexpr milliseconds kServeDeadline = seconds(60);

// Running, i.e. neither gone nor a zombie waiting for its parent.
bool Running(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  return !stat.empty() && stat.find(") Z ") == std::string::npos;
}

std::vector<int> ParseNumbers(const std::string& text) {
  std::vector<int> out;
  std::istringstream in(text);
  for (int n; in >> n;) out.push_back(n);
  return out;
}

class GuestCloseRangeTest : public GuestTest {
 protected:
  void SetUp() override {
    GuestTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    TargetOptions options;
    options.argv = {kCloseRangeHost};
    options.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}};
    // A daemon purges its descriptors at start-up, before anyone talks to
    // the agent: wait for the socket file without connecting to it.
    options.connect_to_agent = false;
    options.stdin_pipe = true;
    options.await_handshake_closed = true;
    host_ = Start(options);
    ASSERT_NE(host_, nullptr);
    // The host has opened nothing yet (its handshake pipe is closed): every
    // descriptor above stderr is the agent's.
    for (const auto& [fd, target] : ReadFdTargets(host_->pid())) {
      if (fd > 2) agent_fds_.push_back(fd);
    }
    ASSERT_FALSE(agent_fds_.empty()) << "the agent holds no descriptor to take over";
    std::string go = "go";
    if (ReuseAgentNumbers()) {
      for (int fd : agent_fds_) go += " " + std::to_string(fd);
    }
    ASSERT_TRUE(host_->process().WriteStdin(go + "\n"));
    auto report = AwaitStdout(*host_, std::regex(R"(host fds ([\d ]+) port (\d+) child (\d+)\n)"));
    ASSERT_EQ(report.size(), 1u);
    host_fds_ = ParseNumbers(report[0][0]);
    port_ = static_cast<uint16_t>(std::stoi(report[0][1]));
    child_ = std::stoi(report[0][2]);
  }

  // Whether the host puts its own sockets on exactly the agent's numbers
  // (dup2), or opens them the ordinary way, at the lowest free numbers.
  virtual bool ReuseAgentNumbers() const { return true; }

  pid_t parent() const { return host_->pid(); }

  std::string HostOutput() const {
    return "\n--- host stdout ---\n" + host_->process().StdoutText() + "\n--- host stderr ---\n" +
           host_->process().StderrText();
  }

  // Sends requests until parent and child have each answered `each` of
  // `line`'s kind; every reply must be "<pid> <expected>" from one of them.
  // Records a failure (and stops) at the first bad reply, when either of
  // them is no longer running, or at the deadline.
  void ServeFromBoth(const std::string& line, const std::string& expected, int each) {
    std::map<pid_t, int> served;
    int sent = 0;
    bool done = WaitUntil(
        [&] {
          if (!Running(parent()) || !Running(child_)) {
            ADD_FAILURE() << "the host's " << (Running(parent()) ? "child" : "parent")
                          << " is gone after " << sent << " requests" << HostOutput();
            return true;
          }
          ++sent;
          auto reply = TcpRequest(port_, line, kRequestTimeout);
          if (!reply) {
            ADD_FAILURE() << "request '" << line << "' #" << sent << ": " << reply.error().message
                          << HostOutput();
            return true;
          }
          const size_t space = reply->find(' ');
          const pid_t pid = std::atoi(reply->substr(0, space).c_str());
          if ((pid != parent() && pid != child_) || space == std::string::npos ||
              reply->substr(space + 1) != expected) {
            ADD_FAILURE() << "request '" << line << "' #" << sent << " got '" << *reply
                          << "', want '<pid> " << expected << "'" << HostOutput();
            return true;
          }
          ++served[pid];
          return served[parent()] >= each && served[child_] >= each;
        },
        kServeDeadline, milliseconds(0));
    EXPECT_TRUE(done && served[parent()] >= each && served[child_] >= each)
        << "after " << sent << " requests: parent served " << served[parent()] << ", child "
        << served[child_] << HostOutput();
  }

  // Echo works in parent and child, and every descriptor the host opened is
  // still open, still the same object, and the socketpair still carries
  // exactly what the host sends.
  void ExpectHostIntact() {
    ServeFromBoth("echo hello", "hello", kRequestsEach);
    ServeFromBoth("check", "ok", 3);
  }

  TargetProcess* host_ = nullptr;
  std::vector<int> agent_fds_;  // the agent's descriptors before the purge
  std::vector<int> host_fds_;   // the host's after it
  uint16_t port_ = 0;
  pid_t child_ = 0;
};

// The host takes exactly the numbers the agent used, while the agent (woken
// by its wake-up pipe losing its writer) is re-creating its descriptors: the
// agent must neither claim those numbers again nor mistake the host's files
// for its own.
TEST_F(GuestCloseRangeTest, TheHostsSocketsOnTheAgentsNumbersServeInParentAndChild) {
  const std::set<int> host(host_fds_.begin(), host_fds_.end());
  for (int fd : agent_fds_) {
    EXPECT_TRUE(host.contains(fd)) << "fd " << fd << " (the agent's before) is not the host's now";
  }
  const std::map<int, std::string> now = ReadFdTargets(parent());
  for (int fd : host_fds_) {
    EXPECT_TRUE(now.contains(fd)) << "the host's fd " << fd << " is not open in the parent";
  }
  ExpectHostIntact();
}

// The ordinary daemon: close_range(3, ~0U), then its own sockets at the
// lowest free numbers. The agent's numbers (768 and up) are then simply
// closed, which poll() reports at the next wake-up. (A host that dup2()s its
// files onto exactly the agent's numbers is recovered from only when one of
// those files becomes readable: docs/architecture.md, "Descriptors".)
class GuestCloseRangeOrdinaryTest : public GuestCloseRangeTest {
 protected:
  bool ReuseAgentNumbers() const override { return false; }
};

TEST_F(GuestCloseRangeOrdinaryTest, TheAgentRecoversItsSocketAndServesTheParent) {
  // The first call already succeeds: the agent notices its socket is gone
  // when this connection wakes it, re-creates it at the same path, and the
  // CLI retries the connection the agent dropped.
  CommandResult status = Cli({"status", "--pid", std::to_string(parent()), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status << HostOutput();
  EXPECT_EQ(ParseJsonOutput(status)["pid"], parent());
  EXPECT_TRUE(IsSocketFile(SocketOf(parent())));
  const std::string out = dir().File("parent.heap");
  CommandResult dump = Cli({"dump", "--pid", std::to_string(parent()), "--out", out});
  ASSERT_EQ(dump.exit_code, 0) << dump << HostOutput();
  EXPECT_EQ(ReadFile(out).rfind("heap_v2/", 0), 0u);
  // The agent's recovery took nothing of the host's.
  ExpectHostIntact();
  CommandResult again = Cli({"stats", "--pid", std::to_string(parent()), "--json"});
  EXPECT_EQ(again.exit_code, 0) << again << HostOutput();
}

TEST_F(GuestCloseRangeOrdinaryTest, TheForkedChildHasItsOwnAgentAndLeavesTheParentsAlone) {
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(child_)); }, seconds(10)))
      << "the child (pid " << child_ << ") never served " << SocketOf(child_) << HostOutput();
  ExpectServed(child_);
  const nlohmann::json targets = ListTargets();
  auto child = FindTarget(targets, child_);
  ASSERT_TRUE(child.has_value()) << targets.dump(2);
  EXPECT_EQ(Field(*child, "ppid"), parent()) << child->dump(2);
  EXPECT_EQ(Field(*child, "stale"), false) << child->dump(2);
  ExpectServed(parent());
  ExpectHostIntact();
  // Both exit normally: each agent removes its own socket, and only its own.
  std::optional<ExitStatus> exit = host_->Terminate();
  ASSERT_TRUE(exit.has_value()) << "no exit within 20 s of SIGTERM" << HostOutput();
  EXPECT_EQ(exit->ShellCode(), 0) << "(128 + signal when killed)" << HostOutput();
  EXPECT_TRUE(WaitUntil([&] { return SocketNames().empty() && !Running(child_); }, seconds(10)))
      << ::testing::PrintToString(SocketNames());
  EXPECT_EQ(ListTargets(), nlohmann::json::array());
}

}  // namespace
}  // namespace memprof::integration
