// Issue 30, faults a target meets in the field that the other fault tests do
// not make (docs/reliability.md, "Faults", lists each with its test): the
// target stopped in the middle of a dump, its socket directory removed under
// the running agent, and a target whose root has an empty /dev. In each the
// agent must not crash or hang, memprofctl must give up in bounded time with
// a message that is true, and nothing may be left behind.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/process_gauges.h"
#include "tests/integration/harness/raw_http2.h"
#include "tests/integration/harness/tls_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The --timeout a dump of a stopped target is given up after, and the bound
// this test claims for giving up: the timeout plus a generous allowance for
// a loaded machine.
constexpr char kStallTimeout[] = "2s";
constexpr auto kGiveUpBound = seconds(60);

// The agent's dump memfds open in `pid`, in any descriptor table (the
// agent's own table is not /proc/<pid>/fd).
int DumpMemfds(pid_t pid) {
  int n = 0;
  for (const std::string& target : DescriptorTargetsOfAllThreads(pid)) {
    n += target.starts_with("/memfd:memprof-heap-dump") ? 1 : 0;
  }
  return n;
}

// A Dump call made by hand by a client that grants no flow-control window
// (SETTINGS_INITIAL_WINDOW_SIZE 0): the agent takes the profile and opens
// the stream but can send none of it, so the dump stays in flight however
// small it is, until the socket is closed (or the agent's stall deadline).
Fd StartUnreadDump(const std::string& socket) {
  Fd fd = ConnectRaw(socket);
  if (!fd) return fd;
  constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  constexpr char kNoWindow[] = {0x00, 0x04, 0x00, 0x00, 0x00, 0x00};  // INITIAL_WINDOW_SIZE 0
  const std::string call = std::string(kPreface, sizeof(kPreface) - 1) +
                           Http2Frame(kFrameSettings, 0, 0, std::string_view(kNoWindow, 6)) +
                           GrpcCallHeaders(1, "/memprof.v1.MemoryProfile/Dump") +
                           Http2Frame(kFrameData, kFlagEndStream, 1, GrpcMessagePrefix(0));
  if (!SendAll(fd.get(), call)) return Fd();
  return fd;
}

// A loopback TCP port nobody listens on now (the kernel's pick).
uint16_t FreeLoopbackPort() {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

// Running, i.e. neither gone nor a zombie.
bool Running(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  return !stat.empty() && stat.find(") Z ") == std::string::npos;
}

// Whether memprofctl `cli` has written part of its output file: an anonymous
// O_TMPFILE file in `dir` seen through its descriptors (or, on a file system
// without O_TMPFILE, a visible .<name>.XXXXXX).
bool TempHasData(const TempDir& dir, const std::string& name, const Subprocess& cli) {
  for (const std::string& entry : dir.List()) {
    struct stat st {};
    if (entry.starts_with("." + name + ".") && ::stat(dir.File(entry).c_str(), &st) == 0 &&
        st.st_size > 0) {
      return true;
    }
  }
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(cli.pid()) + "/fd", ec)) {
    struct stat st {};
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (target.starts_with(dir.path() + "/#") && ::stat(fd.path().c_str(), &st) == 0 &&
        st.st_size > 0) {
      return true;
    }
  }
  return false;
}

class ChaosTest : public GuestTest {
 protected:
  // unshare(1), and whether this machine lets it make a mount namespace
  // with a tmpfs in it; skips the test when it does not.
  void RequireMountNamespaces() {
    ASSERT_TRUE(test_support::CanRun(test_support::Unshare(), &unshare_));
    CommandResult probe = RunCommand(
        {unshare_, "--mount", "/bin/sh", "-c", "mount -t tmpfs none /dev"}, {}, seconds(30));
    if (probe.exit_code != 0) {
      GTEST_SKIP() << "mount namespaces are not permitted here (exit code " << probe.exit_code
                   << "): " << probe.err;
    }
  }

  // `argv` in a mount namespace of its own whose /dev is an empty tmpfs: no
  // /dev/null, /dev/urandom, /dev/shm, nothing. The same process (sh execs).
  std::vector<std::string> WithEmptyDev(const std::vector<std::string>& argv) const {
    std::vector<std::string> wrapped = {unshare_, "--mount", "/bin/sh", "-c",
                                        "mount -t tmpfs -o size=64k,mode=0755 memprof-nodev /dev "
                                        "&& exec \"$0\" \"$@\""};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    return wrapped;
  }

  std::string unshare_;
};

// SIGSTOP while the dump streams: memprofctl gives up once the agent has sent
// nothing for --timeout, says the process is stopped, exits 3 and leaves no
// file; after SIGCONT the agent has released the dump and serves the next.
TEST_F(ChaosTest, ATargetStoppedMidDumpIsGivenUpOnAndServesAfterSigcont) {
  TargetProcess* t = StartBigDumpTarget();
  ASSERT_NE(t, nullptr);
  const std::string out = dir().File("p.heap");
  std::optional<ExitStatus> status;
  std::unique_ptr<Subprocess> cli;
  std::chrono::steady_clock::time_point stopped_at;
  // A dump that finished before the stop landed is tried again.
  for (int attempt = 0; attempt < 5 && !status; ++attempt) {
    auto spawned = Subprocess::Spawn(SpawnOptions{
        {kMemprofctl, "--timeout", kStallTimeout, "dump", "--pid", std::to_string(t->pid()),
         "--out", out},
        {{"MEMPROF_SOCKET_DIR", SocketDir()}},
        -1});
    ASSERT_TRUE(spawned.has_value()) << spawned.error().message;
    cli = std::move(*spawned);
    ASSERT_TRUE(WaitUntil([&] { return TempHasData(dir(), "p.heap", *cli) || cli->HasExited(); },
                          seconds(60), milliseconds(1)));
    t->process().Signal(SIGSTOP);
    stopped_at = std::chrono::steady_clock::now();
    if (cli->HasExited()) {  // too quick
      t->process().Signal(SIGCONT);
      ::unlink(out.c_str());
      continue;
    }
    status = cli->Wait(kGiveUpBound);
    ASSERT_TRUE(status.has_value()) << "memprofctl still waits for a stopped target after "
                                    << kGiveUpBound.count() << " s";
  }
  ASSERT_TRUE(status.has_value()) << "every dump finished before the target could be stopped";
  const auto gave_up_after = std::chrono::steady_clock::now() - stopped_at;
  std::cout << "[chaos] gave up "
            << std::chrono::duration_cast<milliseconds>(gave_up_after).count()
            << " ms after SIGSTOP\n";
  const std::string err = cli->StderrText();
  EXPECT_EQ(status->ShellCode(), 3) << err;
  EXPECT_EQ(cli->StdoutText(), "");
  EXPECT_TRUE(err.starts_with("memprofctl: error: ")) << err;
  EXPECT_NE(err.find(" sent nothing for 2s in the middle of the heap profile (after "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("the process is stopped (SIGSTOP, or job control); `kill -CONT " +
                     std::to_string(t->pid()) + "` resumes it"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(out + " was not written"), std::string::npos) << err;
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{}) << "partial or temp file left";

  t->process().Signal(SIGCONT);
  // The agent notices the cancelled stream and frees its slot and memfd.
  EXPECT_TRUE(WaitUntil([&] { return DumpMemfds(t->pid()) == 0; }, seconds(30), milliseconds(20)))
      << "the agent still holds the abandoned dump";
  CommandResult next = CliFor(*t, "dump", {"--out", dir().File("next.heap")});
  EXPECT_EQ(next.exit_code, 0) << next;
  EXPECT_TRUE(ReadFile(dir().File("next.heap")).starts_with("heap_v2/"));
}

// The socket directory removed under a running agent (a tmp cleaner, an
// operator's rm -rf). While a client session is open the agent notices at its
// next wake-up and publishes its socket again, directory included; asleep, it
// cannot notice, and memprofctl says what happened instead of guessing.
TEST_F(ChaosTest, ARemovedSocketDirectoryIsRepublishedOrExplained) {
  const std::string sockets = dir().File("sockets");
  TargetOptions options;
  options.argv = {kLinkedTarget};
  // A session of 3 s: long enough for the test to remove the directory
  // while it lasts, short enough to wait for its end; debug, so that the end
  // of each session is logged (CountServerStops).
  options.env = {{"MALLOC_CONF", kProfilingReadyConf},
                 {"MEMPROF_IDLE_TIMEOUT", "3s"},
                 {"MEMPROF_LOG_LEVEL", "debug"}};
  options.socket_dir = sockets;  // IntegrationTest::Start would use dir() itself
  auto started = TargetProcess::Start(options);
  ASSERT_TRUE(started.has_value()) << started.error().message;
  TargetProcess* t = started->get();  // killed and reaped when `started` goes
  const std::string pid = std::to_string(t->pid());
  const std::string path = sockets + "/" + pid + ".sock";
  const std::map<std::string, std::string> env = {{"MEMPROF_SOCKET_DIR", sockets}};
  auto stops = [&] { return CountServerStops(t->process().StderrText()); };

  // Removed during a session: published again by the time it ends.
  CommandResult first = Cli({"status", "--pid", pid}, env);
  ASSERT_EQ(first.exit_code, 0) << first;
  std::filesystem::remove_all(sockets);
  EXPECT_TRUE(WaitUntil([&] { return SocketAccepts(path); }, seconds(30), milliseconds(20)))
      << "the agent did not publish its socket again; its log:\n"
      << t->process().StderrText();
  EXPECT_EQ(Cli({"status", "--pid", pid}, env).exit_code, 0);

  // Removed while the agent sleeps: memprofctl says so, and how it comes back.
  const int before = stops();
  ASSERT_TRUE(WaitUntil([&] { return stops() > before; }, seconds(30), milliseconds(20)))
      << "the session did not end";
  std::filesystem::remove_all(sockets);
  CommandResult gone = Cli({"status", "--pid", pid}, env);
  ExpectCliError(gone, 3,
                 "memprof agent running but unreachable: its socket " + path +
                     " was removed (with its directory " + sockets +
                     ") while the agent listened on it");
  ASSERT_EQ(::mkdir(sockets.c_str(), 0700), 0);
  CommandResult emptied = Cli({"status", "--pid", pid}, env);
  ExpectCliError(emptied, 3, "its socket " + path + " was removed (from " + sockets + ")");
  EXPECT_NE(emptied.err.find("else restart the process"), std::string::npos) << emptied;

  // The agent neither crashed nor hangs: the process exits normally, and
  // leaves nothing in the directory.
  std::optional<ExitStatus> exit = t->Terminate();
  ASSERT_TRUE(exit.has_value()) << "the target hangs on SIGTERM";
  EXPECT_EQ(exit->ShellCode(), 0) << t->process().StderrText();
  EXPECT_TRUE(std::filesystem::is_empty(sockets));
}

// A host that closes every descriptor while a dump streams (close_range_host
// `go`: close_range(3, ~0U), then its own sockets at the lowest numbers and a
// forked child). The dump, held in flight by a client that grants the stream
// no window, lives in the agent's own descriptor table: the
// purge touches none of it, the agent releases it when its client goes, and
// serves on; the host's new files are untouched.
TEST_F(ChaosTest, AHostClosingEveryDescriptorMidDumpTouchesNothingOfTheAgents) {
  TargetOptions options;
  options.argv = {kCloseRangeHost};
  // MEMPROF_FORK=off: the host's fork() after its purge must not stop gRPC
  // (which cancels the call in flight, by design: ForkTest), so that what
  // happens to the dump is the purge's doing alone.
  options.env = {{"LD_PRELOAD", kAgentPreload},
                 {"MALLOC_CONF", kProfilingReadyConf},
                 {"MEMPROF_FORK", "off"}};
  options.stdin_pipe = true;
  TargetProcess* host = Start(options);
  ASSERT_NE(host, nullptr);
  const pid_t pid = host->pid();
  Fd stalled = StartUnreadDump(SocketOf(pid));
  ASSERT_TRUE(stalled) << "cannot connect to " << SocketOf(pid);
  ASSERT_TRUE(WaitUntil([&] { return DumpMemfds(pid) > 0; }, seconds(30), milliseconds(5)))
      << "the agent never started the dump";
  // Still in flight: the agent waits for a window the client never gives.
  ASSERT_EQ(WaitForStreamEnd(stalled.get(), 1, seconds(2)), StreamEnd::kTimeout)
      << "the dump stream ended although the client granted it no window";

  ASSERT_TRUE(host->process().WriteStdin("go\n"));
  auto report = AwaitStdout(*host, std::regex(R"(host fds ([\d ]+) port (\d+) child (\d+)\n)"));
  ASSERT_EQ(report.size(), 1u);
  const auto port = static_cast<uint16_t>(std::stoi(report[0][1]));
  const pid_t child = std::stoi(report[0][2]);
  EXPECT_GT(DumpMemfds(pid), 0) << "the host's purge closed the agent's dump";
  EXPECT_EQ(WaitForStreamEnd(stalled.get(), 1, milliseconds(500)), StreamEnd::kTimeout)
      << "the host's purge ended the dump stream";

  stalled = Fd();  // the client goes away
  EXPECT_TRUE(WaitUntil([&] { return DumpMemfds(pid) == 0; }, seconds(30), milliseconds(20)))
      << "the agent still holds the dump of a client that went away";
  const std::string out = dir().File("after.heap");
  CommandResult dump = CliFor(*host, "dump", {"--out", out});
  EXPECT_EQ(dump.exit_code, 0) << dump;
  EXPECT_TRUE(ReadFile(out).starts_with("heap_v2/"));
  for (int i = 0; i < 6; ++i) {
    auto reply = TcpRequest(port, "check", seconds(10));
    ASSERT_TRUE(reply.has_value()) << reply.error().message;
    EXPECT_TRUE(*reply == std::to_string(pid) + " ok" || *reply == std::to_string(child) + " ok")
        << *reply;
  }
  std::optional<ExitStatus> exit = host->Terminate();
  ASSERT_TRUE(exit.has_value()) << "the host hangs on SIGTERM";
  EXPECT_EQ(exit->ShellCode(), 0) << host->process().StderrText();
}

// A target whose root has an empty /dev (no null, urandom, shm: a minimal
// container image, or a chroot whose /dev lost its nodes). The agent loads
// its server, serves every request and streams a dump; memprofctl, itself run
// with an empty /dev, talks to it; and the target exits normally.
TEST_F(ChaosTest, AnEmptyDevInTheTargetsRootHurtsNeitherSide) {
  ASSERT_NO_FATAL_FAILURE(RequireMountNamespaces());
  if (IsSkipped()) return;
  TargetOptions options;
  options.argv = WithEmptyDev({kPlainTarget});
  options.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}};
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  ASSERT_FALSE(FileExists("/proc/" + std::to_string(t->pid()) + "/root/dev/null"))
      << "the target's /dev is not empty";

  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"status"},
                                             {"activate", "--for", "1m"},
                                             {"stats", "--json"},
                                             {"dump", "--out", dir().File("host.heap")},
                                             {"deactivate"}}) {
    CommandResult r = CliFor(*t, args[0], {args.begin() + 1, args.end()});
    EXPECT_EQ(r.exit_code, 0) << r;
  }
  EXPECT_EQ(Cli({"report", dir().File("host.heap"), "--top", "3"}).exit_code, 0);

  // memprofctl with an empty /dev of its own.
  const std::string out = dir().File("nodev.heap");
  CommandResult inside =
      RunCommand(WithEmptyDev({kMemprofctl, "dump", "--pid", std::to_string(t->pid()), "--out",
                               out}),
                 {{"MEMPROF_SOCKET_DIR", SocketDir()}}, seconds(60));
  EXPECT_EQ(inside.exit_code, 0) << inside;
  EXPECT_TRUE(ReadFile(out).starts_with("heap_v2/"));
  CommandResult stats = RunCommand(
      WithEmptyDev({kMemprofctl, "stats", "--pid", std::to_string(t->pid()), "--json"}),
      {{"MEMPROF_SOCKET_DIR", SocketDir()}}, seconds(60));
  EXPECT_EQ(stats.exit_code, 0) << stats;

  std::optional<ExitStatus> exit = t->Terminate();
  ASSERT_TRUE(exit.has_value()) << "the target hangs on SIGTERM";
  EXPECT_EQ(exit->ShellCode(), 0) << t->process().StderrText();
}

// The same with the agent's remote listener (mutual TLS, which must hold
// on a root whose /dev has lost its nodes). The
// handshakes need randomness, which must not depend on /dev/urandom; a
// client the agent refuses must not hurt it either.
TEST_F(ChaosTest, ARemoteTlsAgentWithAnEmptyDevServes) {
  ASSERT_NO_FATAL_FAILURE(RequireMountNamespaces());
  if (IsSkipped()) return;
  auto tls = TlsFixture::Create();
  ASSERT_TRUE(tls.has_value()) << tls.error().message;
  const uint16_t port = FreeLoopbackPort();
  ASSERT_NE(port, 0);
  const std::string listen = "127.0.0.1:" + std::to_string(port);
  TargetOptions options;
  options.argv = WithEmptyDev({kPlainTarget});
  options.env = (*tls)->AgentEnv();
  options.env["LD_PRELOAD"] = kAgentPreload;
  options.env["MALLOC_CONF"] = kProfilingReadyConf;
  options.env["MEMPROF_LISTEN"] = listen;
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  const TlsFiles& f = (*tls)->files();
  auto remote = [&](std::vector<std::string> args, const std::string& ca) {
    args.insert(args.end(), {"--target", listen, "--tls-ca", ca, "--tls-cert", f.client_cert,
                             "--tls-key", f.client_key});
    return Cli(args);
  };
  // The listener starts beside the Unix socket; give it until it answers.
  CommandResult status;
  EXPECT_TRUE(WaitUntil(
      [&] {
        status = remote({"status", "--json"}, f.ca_cert);
        return status.exit_code == 0 || !Running(t->pid());
      },
      seconds(30), milliseconds(100)))
      << status;
  ASSERT_EQ(status.exit_code, 0) << status << t->process().StderrText();
  CommandResult refused = remote({"status"}, f.wrong_ca_cert);
  EXPECT_EQ(refused.exit_code, 4) << refused;
  CommandResult stats = remote({"stats", "--json"}, f.ca_cert);
  EXPECT_EQ(stats.exit_code, 0) << stats;
  CommandResult dump = remote({"dump", "--out", dir().File("remote.heap")}, f.ca_cert);
  EXPECT_EQ(dump.exit_code, 0) << dump;
  EXPECT_TRUE(ReadFile(dir().File("remote.heap")).starts_with("heap_v2/"));

  std::optional<ExitStatus> exit = t->Terminate();
  ASSERT_TRUE(exit.has_value()) << "the target hangs on SIGTERM";
  EXPECT_EQ(exit->ShellCode(), 0) << t->process().StderrText();
}

}  // namespace
}  // namespace memprof::integration
