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
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/temp_dir.h"
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

// The same container, started without memprof, in which the agent's
// directory is hidden too (an empty tmpfs over it): the process cannot see
// the installed agent, as in a container with its own root.
// `emptied` (when given): a file made empty in there (/dev/null bound over
// it), as if the container lacked it.
std::vector<std::string> PlainContainerArgv(const std::string& unshare, const std::string& program,
                                            const std::string& socket_dir,
                                            const std::string& hidden_dir,
                                            const std::string& emptied = "") {
  return {unshare, "--pid", "--mount", "--fork", "--mount-proc", "--kill-child", "/bin/sh", "-c",
          "mount -t tmpfs -o mode=1777 memprof-container \"$1\" && "
          "mount -t tmpfs memprof-no-agent \"$2\" && "
          "{ [ -z \"$3\" ] || mount --bind /dev/null \"$3\"; } && exec \"$0\"",
          program, socket_dir, hidden_dir, emptied};
}

// Where the agent's server part finds `library` on this machine (ldd).
std::string ResolvedLibrary(const std::string& server, const std::string& library) {
  CommandResult ldd = RunCommand({"/usr/bin/ldd", server}, {}, seconds(30));
  const size_t at = ldd.out.find(library + " => ");
  if (at == std::string::npos) return "";
  const size_t start = at + library.size() + 4;
  return ldd.out.substr(start, ldd.out.find(' ', start) - start);
}

// Descriptors of `pid` that are memfds an attach made.
int AttachMemfds(pid_t pid) {
  int count = 0;
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& entry : std::filesystem::directory_iterator(fds)) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string().find("memfd:memprof-agent") != std::string::npos) ++count;
  }
  return count;
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
    return StartContainer(ContainerArgv(unshare_path_, kLinkedTarget, SocketDir()),
                          kProfilingReadyConf);
  }

  // plain_target (jemalloc, prof:true, no agent) in a container that sees
  // neither the host's socket directory nor the agent's directory.
  std::optional<pid_t> StartPlainInContainer(const std::string& emptied = "") {
    return StartContainer(
        PlainContainerArgv(unshare_path_, kPlainTarget, SocketDir(), AgentDir(), emptied),
        "prof:true");
  }

  // Starts `argv` (unshare ... TARGET) with MALLOC_CONF=`malloc_conf`;
  // returns the target's pid on the host, its first child.
  std::optional<pid_t> StartContainer(std::vector<std::string> argv,
                                      const std::string& malloc_conf) {
    TargetOptions options;
    options.argv = std::move(argv);
    options.env = {{"MALLOC_CONF", malloc_conf}};
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

  static std::string AgentDir() {
    return std::filesystem::path(kAgentPreload).parent_path().string();
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
  CommandResult dump = Cli({"-vv", "dump", "--pid", pid, "--out", out, "--json"});
  ASSERT_EQ(dump.exit_code, 0) << dump;
  const std::string profile = ReadFile(out);
  EXPECT_TRUE(profile.starts_with("heap_v2/")) << profile.substr(0, 200);
  EXPECT_EQ(ParseJsonOutput(dump)["size_bytes"], profile.size());
  EXPECT_EQ(ParseJsonOutput(dump)["sha256"], Sha256Hex(profile));
  // Copied out of the agent's file, found among the threads by its host
  // number (the agent names its thread by the container's).
  EXPECT_NE(dump.err.find("copying the profile out of the agent's file, /proc/" + pid + "/task/"),
            std::string::npos)
      << dump.err;

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

// A process started without memprof in a container that cannot see the
// installed agent: `attach` brings the agent and its server part through two
// memfds (closed again once loaded), the agent publishes its socket in the
// container's own socket directory, and the host's memprofctl finds it by
// the host pid and profiles the process. Nothing of ours is left on the
// host's side, and attaching again says so.
TEST_F(ContainerTest, AProcessStartedPlainInAContainerIsAttachedThroughMemfds) {
  std::optional<pid_t> host_pid = StartPlainInContainer();
  ASSERT_TRUE(host_pid.has_value());
  const std::string pid = std::to_string(*host_pid);
  ASSERT_FALSE(FileExists("/proc/" + pid + "/root" + kAgentPreload))
      << "the container sees the agent: this test would not test memfds";

  CommandResult attach = Cli({"attach", "--pid", pid, "--json"});
  ASSERT_EQ(attach.exit_code, 0) << attach;
  const json attached = ParseJsonOutput(attach);
  EXPECT_EQ(attached["attached"], true);
  EXPECT_EQ(attached["through_memfd"], true);
  EXPECT_GT(attached["memfd_pause_ms"].get<double>(), 0.0);
  EXPECT_EQ(attached["socket"], ContainerSocketPath(*host_pid));
  ASSERT_TRUE(AwaitContainerSocket(*host_pid));
  EXPECT_EQ(AttachMemfds(*host_pid), 0) << "the memfds were left open in the process";

  // Profiled from the host, by the host pid: the report names its function.
  const std::string heap = dir().File("attached.heap");
  std::string report;
  WaitUntil(
      [&] {
        CommandResult dump = Cli({"dump", "--pid", pid, "--out", heap, "--force"});
        if (dump.exit_code != 0) return false;
        report = Cli({"report", "--top", "5", heap}).out;
        return report.find("PlainTargetAllocate") != std::string::npos;
      },
      seconds(60), milliseconds(500));
  EXPECT_NE(report.find("PlainTargetAllocate"), std::string::npos) << report;

  CommandResult again = Cli({"attach", "--pid", pid});
  EXPECT_EQ(again.exit_code, 0) << again;
  EXPECT_NE(again.out.find("already attached"), std::string::npos) << again;

  StopContainer(*host_pid);
  // On the host: only the profile this test wrote; no socket, no agent file.
  EXPECT_EQ(dir().List(), std::vector<std::string>{"attached.heap"});
}

// The agent's server part needs its libraries (gRPC, protobuf) in the
// container: where one is missing, the attach says which, from the loader,
// exits 1, and the process runs on with no socket and no memfd left.
TEST_F(ContainerTest, AContainerWithoutTheAgentsLibrariesSaysWhichAndRunsOn) {
  const std::string server = AgentDir() + "/libmemprof_agent_server.so";
  const std::string grpc = ResolvedLibrary(server, "libgrpc++.so.1.51");
  ASSERT_FALSE(grpc.empty()) << "ldd " << server << " names no libgrpc++.so.1.51";
  std::optional<pid_t> host_pid = StartPlainInContainer(grpc);
  ASSERT_TRUE(host_pid.has_value());
  const std::string pid = std::to_string(*host_pid);

  CommandResult attach = Cli({"attach", "--pid", pid});
  ExpectCliError(attach, 1,
                 "the agent was loaded into process " + pid + " but did not start: cannot load "
                 "the agent's server /proc/self/fd/");
  EXPECT_NE(attach.err.find("libgrpc++.so.1.51"), std::string::npos) << attach;
  EXPECT_EQ(AttachMemfds(*host_pid), 0) << "the memfds were left open in the process";
  EXPECT_FALSE(FileExists(ContainerSocketPath(*host_pid)));
  EXPECT_TRUE(FileExists("/proc/" + pid + "/status"));
  StopContainer(*host_pid);
  EXPECT_TRUE(dir().List().empty());
}

// A process whose /proc/<pid>/maps names files that do not resolve under
// /proc/<pid>/root, as for memprofctl in a chroot, a toolbox or a debugging
// container: its binary and libc are copies in a directory that, in its own
// mount namespace, an empty tmpfs covers once it has started. attach reads
// libc, and report --pid the binary, through /proc/<pid>/map_files (the
// mapping itself), and -v says so.
TEST_F(ContainerTest, FilesWhoseNamesDoNotResolveAreReadThroughTheirMappings) {
  std::string nsenter;
  ASSERT_TRUE(test_support::CanRun(test_support::Nsenter(), &nsenter));
  const std::string libc = ResolvedLibrary(kPlainTarget, "libc.so.6");
  ASSERT_FALSE(libc.empty()) << "ldd " << kPlainTarget << " names no libc.so.6";
  TempDir copies("memprof-shadowed");
  const std::string target = copies.File("plain_target");
  std::optional<pid_t> host_pid = StartContainer(
      {unshare_path_, "--pid", "--mount", "--fork", "--mount-proc", "--kill-child", "/bin/sh",
       "-c",
       "mount -t tmpfs -o mode=1777 memprof-container \"$1\" && "
       "mount -t tmpfs -o mode=0755 memprof-copies \"$2\" && cp \"$0\" \"$3\" \"$2/\" && "
       "LD_LIBRARY_PATH=\"$2\" exec \"$2/plain_target\"",
       kPlainTarget, SocketDir(), copies.path(), libc},
      "prof:true");
  ASSERT_TRUE(host_pid.has_value());
  const std::string pid = std::to_string(*host_pid);
  const std::string maps = "/proc/" + pid + "/maps";
  ASSERT_TRUE(WaitUntil([&] { return ReadFile(maps).find(copies.File("libc.so.6")) !=
                                     std::string::npos; },
                        seconds(30)))
      << ReadFile(maps);
  CommandResult shadow = RunCommand(
      // --root: the target's root, which need not be its mount namespace's
      // (this test in a chroot).
      {nsenter, "--target", pid, "--mount", "--root", "mount", "-t", "tmpfs", "memprof-shadow",
       copies.path()},
      {}, seconds(30));
  ASSERT_EQ(shadow.exit_code, 0) << shadow.err;
  ASSERT_FALSE(FileExists("/proc/" + pid + "/root" + copies.File("libc.so.6")))
      << "the names still resolve: this test would not test the mappings";

  CommandResult attach = Cli({"attach", "--pid", pid, "-v"});
  ASSERT_EQ(attach.exit_code, 0) << attach;
  EXPECT_NE(attach.err.find(copies.File("libc.so.6") + ": read through /proc/" + pid +
                            "/map_files/"),
            std::string::npos)
      << attach;
  ASSERT_TRUE(AwaitContainerSocket(*host_pid));

  const std::string heap = dir().File("shadowed.heap");
  CommandResult report;
  WaitUntil(
      [&] {
        if (Cli({"dump", "--pid", pid, "--out", heap, "--force"}).exit_code != 0) return false;
        report = Cli({"report", "--pid", pid, "--top", "5", "-v", heap});
        return report.out.find("PlainTargetAllocate") != std::string::npos;
      },
      seconds(60), milliseconds(500));
  EXPECT_NE(report.out.find("PlainTargetAllocate"), std::string::npos) << report;
  EXPECT_NE(report.err.find(target + ": read through /proc/" + pid + "/map_files/"),
            std::string::npos)
      << report;

  StopContainer(*host_pid);
  EXPECT_EQ(dir().List(), std::vector<std::string>{"shadowed.heap"});
  EXPECT_TRUE(std::filesystem::is_empty(copies.path())) << "the copies reached the host's view";
}

}  // namespace
}  // namespace memprof::integration
