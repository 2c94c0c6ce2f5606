// A target in a container: its own pid and mount namespaces and a private
// socket directory, so its agent's socket (<dir>/1.sock inside) exists only under
// /proc/<host pid>/root. memprofctl on the host finds and uses it by the host
// pid (docs/contract.md section 2, "local discovery"). Fails when unshare cannot
// run; skipped when this machine does not let the test create namespaces.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The namespace's init: sh mounts a private tmpfs over the socket directory
// and execs the target, which thus becomes pid 1 in there. Only that
// directory is made private, not all of /tmp: the binaries under test may
// live under /tmp themselves (a CI checkout). --kill-child: if unshare dies,
// so does the target.
std::vector<std::string> ContainerArgv(const std::string& unshare, const std::string& program,
                                       const std::string& socket_dir) {
  return {unshare, "--pid", "--mount", "--fork", "--mount-proc", "--kill-child", "/bin/sh", "-c",
          "mount -t tmpfs -o mode=1777 memprof-container \"$1\" && exec \"$0\"", program,
          socket_dir};
}

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// The first child of `pid` (from /proc/<pid>/task/<pid>/children), if any.
std::optional<pid_t> FirstChild(pid_t pid) {
  const std::string p = std::to_string(pid);
  const std::string text = ReadFile("/proc/" + p + "/task/" + p + "/children");
  pid_t child = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), child);
  if (ec != std::errc() || child <= 0) return std::nullopt;
  return child;
}

class ContainerTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_TRUE(test_support::CanRun(test_support::Unshare(), &unshare_path_));
    // Namespaces need CAP_SYS_ADMIN (or user namespaces): find out first.
    CommandResult probe = RunCommand({unshare_path_, "--pid", "--mount", "--fork", "--mount-proc",
                                      "/bin/sh", "-c", "mount -t tmpfs none /tmp"},
                                     {}, seconds(30));
    if (probe.exit_code != 0) {
      GTEST_SKIP() << "creating pid and mount namespaces is not permitted here (exit code "
                   << probe.exit_code << "): " << probe.err;
    }
  }

  // Starts the linked target in a container with MEMPROF_SOCKET_DIR = this
  // test's directory path: inside, that path is a private tmpfs; on the host
  // it is our own, empty directory.
  // Returns the target's pid on the host.
  std::optional<pid_t> StartInContainer() {
    TargetOptions options;
    options.argv = ContainerArgv(unshare_path_, kLinkedTarget, SocketDir());
    options.env = {{"MALLOC_CONF", kProfilingReadyConf}};
    options.socket_dir = SocketDir();
    options.expect_agent = false;  // its socket is not at <dir>/<unshare pid>.sock
    auto target = TargetProcess::Start(options);
    if (!target) {
      ADD_FAILURE() << "cannot start the container: " << target.error().message;
      return std::nullopt;
    }
    unshare_ = std::move(*target);
    std::optional<pid_t> child;
    WaitUntil([&] { return (child = FirstChild(unshare_->pid())).has_value(); }, seconds(10));
    if (!child) ADD_FAILURE() << "unshare " << unshare_->pid() << " has no child";
    return child;
  }

  // The socket as the host sees it, once the agent inside has made it.
  bool AwaitContainerSocket(pid_t host_pid) {
    const std::string path = ContainerSocketPath(host_pid);
    return WaitUntil([&] { return SocketAccepts(path); }, seconds(30));
  }
  std::string ContainerSocketPath(pid_t host_pid) const {
    return "/proc/" + std::to_string(host_pid) + "/root" + SocketDir() + "/1.sock";
  }

  // Ends the container: SIGKILL to its init ends every process in it; unshare
  // then exits and is reaped.
  void StopContainer(pid_t host_pid) {
    ASSERT_EQ(::kill(host_pid, SIGKILL), 0);
    std::optional<ExitStatus> st = unshare_->process().Wait(seconds(20));
    ASSERT_TRUE(st.has_value()) << "unshare did not exit after its child was killed";
    EXPECT_TRUE(WaitUntil([&] { return !FileExists("/proc/" + std::to_string(host_pid)); },
                          seconds(10)))
        << "the container's init was not reaped";
  }

  std::string unshare_path_;
  std::unique_ptr<TargetProcess> unshare_;  // killed (with its group) and reaped at the end
};

TEST_F(ContainerTest, HostCliUsesAnAgentInAContainer) {
  std::optional<pid_t> host_pid = StartInContainer();
  ASSERT_TRUE(host_pid.has_value());
  ASSERT_TRUE(AwaitContainerSocket(*host_pid))
      << "no agent socket at " << ContainerSocketPath(*host_pid) << "\n--- target stderr ---\n"
      << unshare_->process().StderrText();
  // In the container it is pid 1, and its socket is invisible from the host's /tmp.
  const std::string status_text = ReadFile("/proc/" + std::to_string(*host_pid) + "/status");
  EXPECT_NE(status_text.find("NSpid:\t" + std::to_string(*host_pid) + "\t1\n"), std::string::npos)
      << status_text;
  EXPECT_EQ(dir().List(), std::vector<std::string>{}) << "the socket leaked to the host's /tmp";
  EXPECT_TRUE(IsSocket(ContainerSocketPath(*host_pid)));

  const std::string pid = std::to_string(*host_pid);
  CommandResult status = Cli({"status", "--pid", pid, "--json"});
  ASSERT_EQ(status.exit_code, 0) << status;
  json s = ParseJsonOutput(status);
  EXPECT_EQ(s["allocator"], "jemalloc");
  EXPECT_EQ(s["profiling_enabled"], true);

  CommandResult activate = Cli({"activate", "--pid", pid, "--for", "10m"});
  EXPECT_EQ(activate.exit_code, 0) << activate;
  CommandResult stats = Cli({"stats", "--pid", pid, "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats;
  EXPECT_EQ(ParseJsonOutput(stats)["allocator"], "jemalloc");

  const std::string out = dir().File("container.heap");
  CommandResult dump = Cli({"dump", "--pid", pid, "--out", out, "--json"});
  ASSERT_EQ(dump.exit_code, 0) << dump;
  const std::string profile = ReadFile(out);
  EXPECT_TRUE(profile.starts_with("heap_v2/")) << profile.substr(0, 200);
  EXPECT_EQ(ParseJsonOutput(dump)["size_bytes"], profile.size());
  EXPECT_EQ(ParseJsonOutput(dump)["sha256"], Sha256Hex(profile));

  // list: by its host pid, marked as in a container.
  CommandResult list = Cli({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  json targets = ParseJsonOutput(list)["targets"];
  ASSERT_EQ(targets.size(), 1u) << list;
  EXPECT_EQ(targets[0]["pid"], *host_pid);
  EXPECT_EQ(targets[0]["in_container"], true);
  EXPECT_EQ(targets[0]["problem"], "") << list;
  EXPECT_EQ(targets[0]["profiling_active"], true);
  CommandResult table = Cli({"list"});
  ASSERT_EQ(table.exit_code, 0) << table;
  EXPECT_NE(table.out.find(pid), std::string::npos) << table;

  // Without --pid: it is the only agent there is.
  CommandResult only = Cli({"deactivate"});
  EXPECT_EQ(only.exit_code, 0) << only;
  EXPECT_NE(only.out.find("pid " + pid), std::string::npos) << only;

  StopContainer(*host_pid);
  // Gone with its namespace: nothing to find any more.
  ExpectCliError(Cli({"status", "--pid", pid}), 3, "no process with pid " + pid);
  EXPECT_EQ(dir().List(), std::vector<std::string>{"container.heap"});
}

}  // namespace
}  // namespace memprof::integration
