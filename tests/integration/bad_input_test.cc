// The bad-input catalogue (docs/errors.md): every input or fault a user can
// cause, with the exact message fragment and exit code, and proof that
// nothing was lost or left behind: no partial or temp file, existing files
// untouched, and the target still alive and serving. Rows already covered by
// error_test.cc and other_user_test.cc are cited there, not repeated here.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
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

class BadInputTest : public IntegrationTest {
 protected:
  TargetProcess* StartReady() {
    TargetOptions options;
    options.argv = {kPlainTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}};
    return Start(options);
  }
  // A preloaded target whose agent is expected not to start (bad socket
  // directory): returns once the agent has said why on stderr.
  TargetProcess* StartRefusedAgent(const std::string& socket_dir, const std::string& why) {
    TargetOptions options;
    options.argv = {kPlainTarget};
    // The agent is silent unless asked: ask, to read why it refused.
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", kProfilingReadyConf},
                   {"MEMPROF_SOCKET_DIR", socket_dir},
                   {"MEMPROF_LOG_LEVEL", "warn"}};
    options.expect_agent = false;
    options.socket_dir = socket_dir;
    auto target = TargetProcess::Start(options);
    if (!target) {
      ADD_FAILURE() << target.error().message;
      return nullptr;
    }
    refused_.push_back(std::move(*target));
    TargetProcess* t = refused_.back().get();
    EXPECT_TRUE(WaitUntil(
        [&] { return t->process().StderrText().find(why) != std::string::npos; }, seconds(10)))
        << "the agent should log \"" << why << "\"; its stderr:\n"
        << t->process().StderrText();
    return t;
  }

  // The target still runs and its agent still answers.
  void ExpectServing(TargetProcess& t) {
    EXPECT_FALSE(t.process().HasExited()) << "the target died";
    CommandResult r = CliFor(t, "status", {"--json"});
    EXPECT_EQ(r.exit_code, 0) << "the agent stopped serving\n" << r;
  }
  void ExpectNoDumpTaken(TargetProcess& t) { EXPECT_EQ(StatusJson(t)["dumps_served"], 0); }
  void ExpectNothingWritten() {
    EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{}) << "partial or temp file left behind";
  }

 private:
  std::vector<std::unique_ptr<TargetProcess>> refused_;
};

// A kernel thread visible here (kthreadd or one of its children), if any.
std::optional<pid_t> FindKernelThread() {
  for (pid_t pid : {2, 3, 4, 5, 6, 7, 8, 9, 10}) {
    const std::string status = ReadFile("/proc/" + std::to_string(pid) + "/status");
    if (status.find("\nKthread:\t1") != std::string::npos ||
        status.starts_with("Name:\tkthreadd\n")) {
      return pid;
    }
  }
  return std::nullopt;
}

// ---- pids ------------------------------------------------------------------

// Not a positive integer: a usage error, never a fallback to "the only
// agent" (which exists here and must not be touched).
TEST_F(BadInputTest, PidThatIsNotAPositiveIntegerIsAUsageError) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string out = dir().File("p.heap");
  ExpectAll({
      {{"status", "--pid", "0"}, 2, "invalid pid '0': expected a positive process id"},
      {{"status", "--pid=-5"}, 2, "invalid pid '-5': expected a positive process id"},
      {{"status", "--pid", "99999999999"}, 2, "invalid pid '99999999999'"},
      {{"status", "--pid", "abc"}, 2, "invalid pid 'abc'"},
      {{"status", "--pid", "12abc"}, 2, "invalid pid '12abc'"},
      {{"activate", "--pid", "0"}, 2, "invalid pid '0'"},
      {{"dump", "--pid", "abc", "--out", out}, 2, "invalid pid 'abc'"},
  });
  ExpectAll({{{"status"}, 2, "invalid pid 'abc'"}, {{"dump", "--out", out}, 2, "invalid pid"}},
            {{"MEMPROF_PID", "abc"}});
  ExpectNothingWritten();
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  ExpectNoDumpTaken(*t);
}

TEST_F(BadInputTest, PidOfAKernelThread) {
  std::optional<pid_t> kthread = FindKernelThread();
  if (!kthread) GTEST_SKIP() << "no kernel thread is visible in this pid namespace";
  const std::string p = std::to_string(*kthread);
  ExpectAll({
      {{"status", "--pid", p}, 3, "process " + p + " ("},
      {{"status", "--pid", p}, 3, ") is a kernel thread: it has no user-space heap to profile"},
      {{"dump", "--pid", p, "--out", dir().File("k.heap")}, 3, "is a kernel thread"},
  });
  ExpectNothingWritten();
}

// Pid 1 may be beyond even root's reach (a container's init of another user
// namespace): then memprofctl says it cannot tell, rather than "no agent".
TEST_F(BadInputTest, PidOneWithoutAnAgent) {
  CommandResult r = Cli({"status", "--pid", "1"});
  ExpectCliError(r, 3, "process 1 (");
  const bool knows = ReadFile("/proc/1/maps").size() > 0;
  EXPECT_NE(r.err.find(knows ? ") has no memprof agent (no socket at " + dir().File("1.sock") +
                                   ", and no libmemprof_agent.so in its memory map)"
                             : ") has no socket at " + dir().File("1.sock") +
                                   ", and memprofctl cannot tell whether it loaded the memprof "
                                   "agent: it may not read /proc/1/maps"),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find("memprofctl run -- CMD"), std::string::npos) << r;
}

// `memprofctl status 1234` (a pid without --pid) is not silently ignored.
TEST_F(BadInputTest, PidAsAPositionalArgument) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  ExpectAll({
      {{"status", p},
       2,
       "unexpected argument '" + p + "' for 'status': a process is named with --pid (--pid " + p +
           "), several with --pid A,B or --pid A --pid B"},
      {{"activate", p}, 2, "unexpected argument '" + p + "' for 'activate'"},
  });
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
}

// ---- output paths ------------------------------------------------------------

TEST_F(BadInputTest, OutThatIsADirectory) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(::mkdir(dir().File("adir").c_str(), 0700), 0);
  ASSERT_TRUE(WriteFile(dir().File("adir/inside"), "x"));
  const std::string p = std::to_string(t->pid());
  ExpectAll({
      {{"dump", "--pid", p, "--out", dir().File("adir")},
       2,
       "output path '" + dir().File("adir") + "' is a directory; name a file inside it"},
      {{"dump", "--pid", p, "--out", dir().File("new/")},
       2,
       "output path '" + dir().File("new/") + "' names a directory"},
  });
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"adir"});
  EXPECT_EQ(ReadFile(dir().File("adir/inside")), "x");
  ExpectNoDumpTaken(*t);
  ExpectServing(*t);
}

// As root, renaming a temp file over /dev/null or /dev/full would replace the
// device with a regular file; memprofctl refuses any non-regular --out.
TEST_F(BadInputTest, OutOnADeviceIsRefusedAndTheDeviceStays) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  const std::string fifo = dir().File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ExpectAll({
      {{"dump", "--pid", p, "--out", "/dev/full"},
       2,
       "output path '/dev/full' is not a regular file (a character device); name a regular "
       "file, or use --out - and redirect stdout"},
      {{"dump", "--pid", p, "--out", "/dev/null"}, 2, "'/dev/null' is not a regular file"},
      {{"dump", "--pid", p, "--out", fifo}, 2, "is not a regular file (a FIFO)"},
  });
  for (const char* dev : {"/dev/full", "/dev/null"}) {
    struct stat st {};
    ASSERT_EQ(::stat(dev, &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << dev << " was replaced";
  }
  std::unique_ptr<DIR, int (*)(DIR*)> devdir(::opendir("/dev"), &::closedir);
  ASSERT_TRUE(devdir);
  while (const dirent* d = ::readdir(devdir.get())) {
    const std::string name = d->d_name;
    EXPECT_FALSE(name.starts_with(".full.") || name.starts_with(".null."))
        << "temp file left in /dev: " << name;
  }
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"fifo"});
  ExpectNoDumpTaken(*t);
  ExpectServing(*t);
}

// sysfs refuses new files even to root; for a user, see
// OtherUserTest.OutInADirectoryTheUserCannotWrite.
TEST_F(BadInputTest, OutInAnUnwritableDirectory) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "dump", {"--out", "/sys/memprof-test.heap"});
  ExpectCliError(r, 4, "cannot create a file in directory '/sys' for '/sys/memprof-test.heap'");
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r;
  EXPECT_FALSE(FileExists("/sys/memprof-test.heap"));
  ExpectNoDumpTaken(*t);
  ExpectServing(*t);
}

// A full file system mid-dump (a 4 KiB tmpfs, mounted in a private mount
// namespace so nothing else sees it): exit 1, the temp file is removed, and
// the existing file of that name is untouched.
TEST_F(BadInputTest, DiskFullDuringTheDump) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tiny tmpfs needs root";
  std::string unshare;
  ASSERT_TRUE(test_support::CanRun(test_support::Unshare(), &unshare));
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string mnt = dir().File("full");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0700), 0);
  const std::string script =
      "mount -t tmpfs -o size=4k memprof-full \"$1\" || exit 99\n"
      "printf precious > \"$1/p.heap\"\n"
      "\"$2\" dump --pid \"$3\" --out \"$1/p.heap\" --force; rc=$?\n"
      "ls -A \"$1\"; cat \"$1/p.heap\"; exit $rc\n";
  CommandResult r = RunCommand({unshare, "--mount", "/bin/sh", "-c", script, "sh", mnt, kMemprofctl,
                                std::to_string(t->pid())},
                               {{"MEMPROF_SOCKET_DIR", SocketDir()}});
  if (r.exit_code == 99) GTEST_SKIP() << "cannot mount a tmpfs here: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r;
  // The user's path first, not the temporary file's (/proc/self/fd/N).
  EXPECT_TRUE(r.err.starts_with("memprofctl: error: cannot write " + mnt +
                                "/p.heap: No space left on device; " + mnt +
                                "/p.heap was not written"))
      << r;
  EXPECT_EQ(r.out, "p.heap\nprecious") << "temp file left, or the old file changed\n" << r;
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"full"});
  ExpectServing(*t);
}

// ---- durations -------------------------------------------------------------

// Each kind of bad duration has its own reason, checked before any contact.
TEST_F(BadInputTest, DurationsNeedAUnitAndStayInBounds) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  auto activate = [&](std::string value) {
    return std::vector<std::string>{"activate", "--pid", p, "--for=" + value};
  };
  ExpectAll({
      {activate("30"), 2, "invalid duration '30': missing unit; use a number with a unit"},
      {activate("0s"), 2, "invalid duration '0s': must be between 1s and 24h"},
      {activate("500ms"), 2, "invalid duration '500ms': must be between 1s and 24h"},
      {activate("-5s"), 2, "invalid duration '-5s': a duration cannot be negative or signed"},
      {activate("25h"), 2, "invalid duration '25h': must be between 1s and 24h"},
      {activate("abc"), 2, "invalid duration 'abc': expected a number"},
      {activate("1d"), 2, "invalid duration '1d': unknown unit 'd' (valid units: ms, s, m, h)"},
      {activate("99999999999999999999s"), 2, "number too large"},
      {activate("5m30"), 2, "invalid duration '5m30': missing unit"},
  });
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  ExpectServing(*t);
}

// deactivate takes no --for: rejected with the valid options, and an active
// window stays as it was.
TEST_F(BadInputTest, ForIsNotAnOptionOfDeactivate) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(CliFor(*t, "activate", {"--for", "10m"}).exit_code, 0);
  const int64_t window = StatusJson(*t)["window_end_unix_ms"].get<int64_t>();
  ExpectAll({{{"deactivate", "--pid", std::to_string(t->pid()), "--for", "5m"},
              2,
              "unknown option '--for' for 'deactivate' (valid options: "}});
  json status = StatusJson(*t);
  EXPECT_EQ(status["profiling_active"], true);
  EXPECT_EQ(status["window_end_unix_ms"], window);
}

TEST_F(BadInputTest, BadTimeoutIsAUsageError) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  ExpectAll({
      {{"--timeout", "5", "status", "--pid", p}, 2, "invalid duration '5': missing unit"},
      {{"--timeout", "10ms", "status", "--pid", p}, 2, "must be between 100ms and 1h"},
      {{"--timeout", "2h", "status", "--pid", p}, 2, "must be between 100ms and 1h"},
      {{"--timeout", "soon", "status", "--pid", p}, 2, "invalid duration 'soon'"},
      {{"status", "--pid", p, "--timeout", "0s"}, 2, "invalid duration '0s'"},
  });
  ExpectServing(*t);
}

// ---- commands and flags ------------------------------------------------------

TEST_F(BadInputTest, UnknownCommandAndFlagListTheValidChoices) {
  ExpectAll({
      {{"frobnicate"},
       2,
       "unknown command 'frobnicate' (valid commands: list, status, activate, deactivate, dump, "
       "profile, stats, "},
      {{"stauts", "--pid", "1"}, 2, "unknown command 'stauts'; did you mean 'status' or 'stats'?"},
      {{"status", "--bogus"},
       2,
       "unknown option '--bogus' for 'status' (valid options: -h/--help, --pid, --all, --name, "
       "--targets, --target, --tls-ca, --tls-cert, --tls-key, --parallel, --json; "
       "global: --version, -v/--verbose, -q/--quiet, --timeout, --config)"},
      {{"--bogus", "list"}, 2, "unknown option '--bogus' for 'list' (valid options: "},
      {{}, 2, "missing command (valid commands: list, status, "},
      {{"-v"}, 2, "missing command"},
  });
}

TEST_F(BadInputTest, ConflictingOptions) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  ExpectAll({
      {{"stats", "--pid", p, "--json", "--raw"}, 2, "--json excludes --raw"},
      {{"status", "--pid", p, "--name", "plain"}, 2, "status: --pid excludes --name"},
      // About global options, so not said as list's.
      {{"-q", "-v", "list"}, 2, "memprofctl: error: --verbose excludes --quiet"},
      {{"dump", "--pid", p, "--out", "-", "--json"},
       2,
       "--json cannot be combined with --out - (the profile itself goes to stdout)"},
  });
  ExpectNoDumpTaken(*t);
  ExpectServing(*t);
}

TEST_F(BadInputTest, NameThatIsNotARegex) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  ExpectAll({{{"status", "--name", "("}, 2, "--name '(' is not a valid regular expression: "},
             {{"activate", "--name", "[a-"}, 2, "is not a valid regular expression"}});
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
}

TEST_F(BadInputTest, NameMatchingNoneOrSeveral) {
  TargetProcess* a = StartReady();
  TargetProcess* b = StartReady();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::string first = std::to_string(std::min(a->pid(), b->pid()));
  ExpectAll({
      {{"status", "--name", "^no-such-program$"},
       3,
       "no process with a memprof agent matches --name '^no-such-program$' (searched " +
           SocketDir() + "; `memprofctl list` shows the agents)"},
      {{"activate", "--name", "plain_target"},
       2,
       "2 processes with a memprof agent match --name 'plain_target'; choose one with --pid, or "
       "add --all for every one: " +
           first + " (plain_target), "},
  });
  EXPECT_EQ(StatusJson(*a)["profiling_active"], false);
  EXPECT_EQ(StatusJson(*b)["profiling_active"], false);
}

// ---- sockets and socket directories ----------------------------------------------

// A regular file where the agent's socket would be (e.g. a stray copy).
TEST_F(BadInputTest, RegularFileNamedLikeASocket) {
  TargetProcess* t = StartWithoutAgent();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  const std::string fake = t->socket_path();
  ASSERT_TRUE(WriteFile(fake, "not a socket"));
  ExpectAll({
      {{"status", "--pid", p},
       3,
       "process " + p + " (glibc_target) has no memprof agent: " + fake +
           " is a regular file, not a socket (remove it if it is left over)"},
      {{"status"}, 3, "no memprof agents found in " + SocketDir()},
  });
  EXPECT_EQ(ReadFile(fake), "not a socket");
  CommandResult list = Cli({"list", "--json", "--prune"});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(ParseJsonOutput(list)["targets"], json::array()) << list;
  EXPECT_EQ(ReadFile(fake), "not a socket") << "--prune removes only sockets";
  EXPECT_FALSE(t->process().HasExited());
}

TEST_F(BadInputTest, SocketDirectoryEnvironmentThatCannotWork) {
  TargetProcess* t = StartReady();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  const std::string too_long = "/tmp/" + std::string(110, 'd');
  ExpectAll({{{"status", "--pid", p}, 2, "socket directory 'relative/dir' must be an absolute path"}},
            {{"MEMPROF_SOCKET_DIR", "relative/dir"}});
  ExpectAll({{{"status", "--pid", p}, 2, "is longer than 103 bytes, the limit of a Unix socket "
                                         "path; choose a shorter MEMPROF_SOCKET_DIR"}},
            {{"MEMPROF_SOCKET_DIR", too_long}});
  EXPECT_FALSE(FileExists(too_long));
  ExpectServing(*t);
}

// The agent validates its directory before it makes a socket: it refuses to
// start (and says why on the host's stderr, through its own logger) while the
// host keeps running; memprofctl then finds no agent.
TEST_F(BadInputTest, AgentRefusesAnUnsafeSocketDirectory) {
  struct Case {
    std::string name;
    std::string why;     // what the agent logs
    std::string reason;  // what memprofctl says, from the outside
  };
  const std::string sloppy = dir().File("sloppy");  // world-writable, no sticky bit
  ASSERT_EQ(::mkdir(sloppy.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(sloppy.c_str(), 0777), 0);
  const std::string real = dir().File("real");
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  const std::string link = dir().File("link");
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  std::vector<Case> cases = {
      {sloppy, "is writable by other users but lacks the sticky bit (chmod +t)",
       "socket directory '" + sloppy +
           "' is writable by other users but lacks the sticky bit (chmod +t), so the agent "
           "refused it"},
      {link, "is a symbolic link; refusing to use it",
       "socket directory '" + link + "' is a symbolic link, so the agent refused it"},
      {"relative", "must be an absolute path",
       "its MEMPROF_SOCKET_DIR 'relative' is not an absolute path, which the agent refuses"},
  };
  if (::geteuid() == 0) {
    const std::string foreign = dir().File("foreign");
    ASSERT_EQ(::mkdir(foreign.c_str(), 0700), 0);
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
    cases.push_back({foreign, "is owned by uid 65534, not by root or uid 0; refusing to use it",
                     "socket directory '" + foreign +
                         "' is owned by uid 65534, not by root or uid 0, so the agent refused "
                         "it"});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TargetProcess* t = StartRefusedAgent(c.name, c.why);
    ASSERT_NE(t, nullptr);
    EXPECT_NE(t->process().StderrText().find("agent not started"), std::string::npos)
        << t->process().StderrText();
    const std::string p = std::to_string(t->pid());
    // memprofctl reads the target's environment and judges its directory
    // as the agent did, wherever it looks itself.
    const std::string said =
        "process " + p + " (plain_target): memprof agent loaded but not serving: " + c.reason;
    ExpectCliError(Cli({"status", "--pid", p}), 5, said);
    if (c.name.starts_with("/")) {
      ExpectCliError(Cli({"status", "--pid", p}, {{"MEMPROF_SOCKET_DIR", c.name}}), 5, said);
    }
    EXPECT_FALSE(t->process().HasExited()) << "the host died";
  }
  EXPECT_FALSE(FileExists("relative")) << "the agent created a directory in its cwd";
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(DirectoryEntries(real), std::vector<std::string>{}) << "socket made through the link";
  EXPECT_EQ(DirectoryEntries(sloppy), std::vector<std::string>{});
}

TEST_F(BadInputTest, AgentSwitchedOff) {
  TargetOptions options;
  options.argv = {kPlainTarget};
  options.env = {{"LD_PRELOAD", kAgentPreload},
                 {"MALLOC_CONF", kProfilingReadyConf},
                 {"MEMPROF_AGENT", "off"}};
  options.expect_agent = false;
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  ExpectAll({{{"status", "--pid", p},
              3,
              "process " + p +
                  " (plain_target): memprof agent loaded but not serving: MEMPROF_AGENT=off in "
                  "its environment switches it off; restart the process without it"},
             {{"status"}, 3, "no memprof agents found in " + SocketDir()}});
  EXPECT_EQ(dir().List(), std::vector<std::string>{});
  EXPECT_FALSE(t->process().HasExited());
}

// ---- processes -----------------------------------------------------------------

// The target dies while its dump streams: the dump fails with the reason, the
// temp file is removed and the existing file of that name stays as it was.
TEST_F(BadInputTest, TargetExitsDuringTheDump) {
  TargetProcess* t = StartBigDumpTarget();
  ASSERT_NE(t, nullptr);
  const std::string out = dir().File("p.heap");
  ASSERT_TRUE(WriteFile(out, "precious\n"));
  // memprofctl writes into an anonymous O_TMPFILE file in the output
  // directory (a visible .p.heap.XXXXXX where O_TMPFILE is missing): data
  // flows once that file, seen through memprofctl's fds, is not empty.
  auto temp_has_data = [&](const Subprocess& writer) {
    for (const std::string& name : dir().List()) {
      struct stat st {};
      if (name.starts_with(".p.heap.") && ::stat(dir().File(name).c_str(), &st) == 0 &&
          st.st_size > 0) {
        return true;
      }
    }
    const std::string fds = "/proc/" + std::to_string(writer.pid()) + "/fd";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(fds, ec)) {
      struct stat st {};
      const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
      if (target.starts_with(dir().path() + "/#") && ::stat(entry.path().c_str(), &st) == 0 &&
          st.st_size > 0) {
        return true;
      }
    }
    return false;
  };
  // Stop the target once data flows (so the dump is caught mid-stream),
  // then kill it. A dump that finished before the stop is retried.
  std::optional<ExitStatus> cli_status;
  std::unique_ptr<Subprocess> cli;
  for (int attempt = 0; attempt < 5 && !cli_status; ++attempt) {
    auto spawned = Subprocess::Spawn(SpawnOptions{
        {kMemprofctl, "dump", "--pid", std::to_string(t->pid()), "--out", out, "--force"},
        {{"MEMPROF_SOCKET_DIR", SocketDir()}},
        -1});
    ASSERT_TRUE(spawned.has_value()) << spawned.error().message;
    cli = std::move(*spawned);
    ASSERT_TRUE(WaitUntil([&] { return temp_has_data(*cli) || cli->HasExited(); }, seconds(60),
                          milliseconds(1)));
    t->process().Signal(SIGSTOP);
    if (cli->HasExited()) {  // too quick: put the old file back and try again
      t->process().Signal(SIGCONT);
      ASSERT_TRUE(WriteFile(out, "precious\n"));
      continue;
    }
    t->process().KillAndReap();
    cli_status = cli->Wait(seconds(30));
    ASSERT_TRUE(cli_status.has_value()) << "memprofctl hangs on a dead target";
  }
  ASSERT_TRUE(cli_status.has_value()) << "every dump finished before the target could be stopped";
  EXPECT_NE(cli_status->ShellCode(), 0);
  const std::string err = cli->StderrText();
  EXPECT_EQ(cli->StdoutText(), "");
  EXPECT_TRUE(err.starts_with("memprofctl: error: ")) << err;
  EXPECT_NE(err.find(out + " was not written"), std::string::npos) << err;
  EXPECT_EQ(ReadFile(out), "precious\n");
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"p.heap"}) << "temp file left behind";
  EXPECT_EQ(cli_status->ShellCode(), 3) << err;
}

// ---- memprofctl run ------------------------------------------------------------

TEST_F(BadInputTest, RunWithACommandThatCannotBeProfiled) {
  const std::string script = dir().File("not-executable");
  ASSERT_TRUE(WriteFile(script, "#!/bin/sh\ntouch " + dir().File("ran") + "\n"));
  ASSERT_EQ(::chmod(script.c_str(), 0644), 0);
  std::vector<BadCall> calls = {
      {{"run"},
       2,
       "run: missing command; usage: memprofctl run [--allocator NAME] [--] CMD [ARGS...]"},
      {{"run", "--"}, 2, "run: missing command"},
      {{"run", "--", "/nonexistent/server"}, 2, "command not found: /nonexistent/server"},
      {{"run", "--", "memprof-no-such-command"}, 2, "command not found: memprof-no-such-command"},
      {{"run", "--", dir().path()}, 2, "command not found: " + dir().path()},
      {{"run", "--", script}, 4, "cannot execute " + script + ": " + script + " is not executable"},
  };
#ifdef MEMPROF_IT_STATIC_PROGRAM
  calls.push_back({{"run", "--", MEMPROF_IT_STATIC_PROGRAM},
                   5,
                   "is statically linked, so LD_PRELOAD cannot load the memprof agent into it; "
                   "link the agent into the program instead and call memprof_agent_start()"});
#endif
  ExpectAll(calls);
  ExpectAll({{{"run", "--", kPlainTarget}, 2, "MEMPROF_AGENT_LIB=/nonexistent/lib.so: no such "
                                              "readable file"}},
            {{"MEMPROF_AGENT_LIB", "/nonexistent/lib.so"}});
  EXPECT_FALSE(FileExists(dir().File("ran")));
  EXPECT_EQ(dir().List(), std::vector<std::string>{"not-executable"});
}

}  // namespace
}  // namespace memprof::integration
