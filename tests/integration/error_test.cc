// Every error memprofctl can meet: the exit code, the message (what is wrong
// and what to do) and that nothing is left behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"

namespace memprof::integration {
namespace {

using nlohmann::json;

class ErrorTest : public IntegrationTest {
 protected:
  TargetProcess* StartPlain(std::map<std::string, std::string> env, bool expect_agent = true) {
    TargetOptions options;
    options.argv = {kPlainTarget};
    options.env = std::move(env);
    options.expect_agent = expect_agent;
    return Start(options);
  }
  TargetProcess* StartProfilingReady() {
    return StartPlain({{"LD_PRELOAD", kAgentPreload}, {"MALLOC_CONF", kProfilingReadyConf}});
  }
  TargetProcess* StartGlibc(bool with_agent) {
    TargetOptions options;
    options.argv = {kGlibcTarget};
    if (with_agent) options.env["LD_PRELOAD"] = kAgentPreload;
    options.expect_agent = with_agent;
    return Start(options);
  }
  // A pid that certainly has no process: one we started and reaped.
  pid_t DeadPid() {
    CommandResult r = RunCommand({"/bin/sh", "-c", "echo $$"}, {});
    return static_cast<pid_t>(std::stoi(r.out));
  }
  void ExpectNothingWritten() {
    EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{}) << "partial or temp file left behind";
  }
};

TEST_F(ErrorTest, NoSuchProcess) {
  pid_t pid = DeadPid();
  std::string p = std::to_string(pid);
  ExpectCliError(Cli({"status", "--pid", p}), 3, "no process with pid " + p);
  ExpectCliError(Cli({"activate", "--pid", p}), 3, "no process with pid " + p);
  ExpectCliError(Cli({"stats", "--pid", p, "--json"}), 3, "no process with pid " + p);
  ExpectCliError(Cli({"dump", "--pid", p, "--out", dir().File("p.heap")}), 3,
                 "no process with pid " + p);
  ExpectNothingWritten();
}

TEST_F(ErrorTest, ProcessWithoutAgentSaysHowToGetOne) {
  TargetProcess* t = StartGlibc(/*with_agent=*/false);
  ASSERT_NE(t, nullptr);
  std::string p = std::to_string(t->pid());
  CommandResult r = CliFor(*t, "status");
  ExpectCliError(r, 3, "process " + p + " (glibc_target) has no memprof agent");
  EXPECT_NE(r.err.find("a running process gets one with `memprofctl attach --pid " + p + "`"),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find("(no socket at " + t->socket_path() +
                       ", and no libmemprof_agent.so in its memory map)"),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find("memprofctl run"), std::string::npos) << r;
  EXPECT_NE(r.err.find("LD_PRELOAD"), std::string::npos) << r;
  EXPECT_NE(r.err.find("memprof_agent_start"), std::string::npos) << r;
  ExpectCliError(CliFor(*t, "dump", {"--out", dir().File("p.heap")}), 3, "has no memprof agent");
  ExpectNothingWritten();
  EXPECT_FALSE(t->process().HasExited());
}

// An agent serves in the socket directory its environment names; memprofctl,
// looking in another, reads the target's environment and names it.
TEST_F(ErrorTest, AnAgentServingInAnotherDirectoryIsNamedWithIt) {
  TargetProcess* t = StartProfilingReady();  // serving in SocketDir()
  ASSERT_NE(t, nullptr);
  const std::string elsewhere = dir().File("elsewhere");
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0700), 0);
  const std::string p = std::to_string(t->pid());
  CommandResult r = Cli({"status", "--pid", p}, {{"MEMPROF_SOCKET_DIR", elsewhere}});
  ExpectCliError(r, 3,
                 "process " + p + " (plain_target): memprof agent serves in " + SocketDir() +
                     " (MEMPROF_SOCKET_DIR in its environment), not in " + elsewhere +
                     "; use MEMPROF_SOCKET_DIR=" + SocketDir() + " memprofctl ...");
  CommandResult there = Cli({"status", "--pid", p});
  EXPECT_EQ(there.exit_code, 0) << there;
  EXPECT_FALSE(t->process().HasExited());
}

// The core (libmemprof_agent.so) copied without its server module beside it
// publishes its socket but closes every connection: memprofctl names the
// module it looked for, and the process keeps running.
TEST_F(ErrorTest, AnAgentWithoutItsServerModuleNamesIt) {
  const std::string lonely = dir().File("lonely");
  ASSERT_EQ(::mkdir(lonely.c_str(), 0755), 0);
  const std::string core = lonely + "/libmemprof_agent.so";
  ASSERT_TRUE(WriteFile(core, ReadFile(kAgentLibrary)));
  ASSERT_EQ(::chmod(core.c_str(), 0755), 0);
  TargetOptions options;
  options.argv = {kPlainTarget};
  options.env = {{"LD_PRELOAD", AgentPreloadOf(core)}, {"MALLOC_CONF", kProfilingReadyConf}};
  options.connect_to_agent = false;  // a connection is all it drops
  TargetProcess* t = Start(options);
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  const std::string why = "the memprof agent of process " + p +
                          " (plain_target) closes every connection: it could not load its "
                          "server module " +
                          lonely + "/libmemprof_agent_server.so: no such file";
  ExpectCliError(CliFor(*t, "status"), 5, why);
  ExpectCliError(CliFor(*t, "dump", {"--out", dir().File("p.heap")}), 5, why);
  EXPECT_FALSE(FileExists(dir().File("p.heap")));
  CommandResult list = Cli({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  const json targets = ParseJsonOutput(list)["targets"];
  ASSERT_EQ(targets.size(), 1u) << list;
  EXPECT_NE(targets[0]["problem"].get<std::string>().find(why), std::string::npos) << list;
  EXPECT_FALSE(t->process().HasExited());
}

TEST_F(ErrorTest, GlibcTargetAnswersStatusAndStats) {
  TargetProcess* t = StartGlibc(/*with_agent=*/true);
  ASSERT_NE(t, nullptr);
  json status = StatusJson(*t);
  EXPECT_EQ(status["allocator"], "glibc");
  EXPECT_EQ(status["profiling_supported"], false);
  EXPECT_EQ(status["profiling_enabled"], false);
  EXPECT_EQ(status["profiling_active"], false);
  EXPECT_TRUE(status["sample_interval_bytes"].is_number_integer()) << status.dump(2);
  CommandResult text = CliFor(*t, "status");
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_NE(text.out.find("glibc"), std::string::npos) << text;
  EXPECT_EQ(status["sampler"], "memprof");
  EXPECT_NE(text.out.find("sampler:            memprof's own"), std::string::npos) << text;
  EXPECT_EQ(text.out.find("hint:"), std::string::npos) << "nothing to restart\n" << text;

  CommandResult stats = CliFor(*t, "stats", {"--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats;
  json j = ParseJsonOutput(stats);
  EXPECT_EQ(j["allocator"], "glibc");
  EXPECT_GT(j["allocated"].get<int64_t>(), 4 << 20) << "the target keeps 4 MiB live";
  EXPECT_FALSE(j.contains("jemalloc")) << "the jemalloc key is only for jemalloc targets";
  for (const char* key : {"active", "metadata", "resident", "mapped", "retained", "rss_bytes"}) {
    EXPECT_TRUE(j.contains(key) && j[key].is_number_integer()) << key << "\n" << j.dump(2);
  }
  EXPECT_TRUE(j["fragmentation_ratio"].is_number()) << j.dump(2);
  CommandResult table = CliFor(*t, "stats");
  EXPECT_EQ(table.exit_code, 0) << table;
  CommandResult raw = CliFor(*t, "stats", {"--raw"});
  ASSERT_EQ(raw.exit_code, 0) << raw;
  EXPECT_NE(raw.out.find("<malloc version="), std::string::npos) << raw;
}

// memprof's own sampler serves a glibc process, from activation on: a dump
// before it says so and writes nothing.
TEST_F(ErrorTest, GlibcTargetDumpBeforeActivationSaysActivateFirst) {
  TargetProcess* t = StartGlibc(/*with_agent=*/true);
  ASSERT_NE(t, nullptr);
  ExpectCliError(CliFor(*t, "dump", {"--out", dir().File("p.heap")}), 5,
                 "memprof's sampler has not been activated in this process; run `memprofctl "
                 "activate` first");
  ExpectNothingWritten();
  CommandResult activate = CliFor(*t, "activate", {"--for", "5m"});
  EXPECT_EQ(activate.exit_code, 0) << activate;
}

// jemalloc without prof:true: heap profiles by memprof's sampler; what
// needs jemalloc's own profiler (an allocation window) names the restart.
// jemalloc without prof:true: memprof's own sampler serves everything, an
// allocation window too, so nothing asks for a restart.
TEST_F(ErrorTest, JemallocWithoutProfilingNeedsNoRestart) {
  TargetProcess* t = StartPlain({{"LD_PRELOAD", kAgentPreload}});
  ASSERT_NE(t, nullptr);
  json status = StatusJson(*t);
  EXPECT_EQ(status["allocator"], "jemalloc");
  EXPECT_EQ(status["profiling_supported"], true);
  EXPECT_EQ(status["profiling_enabled"], false);
  EXPECT_EQ(status["sampler"], "memprof");
  CommandResult text = CliFor(*t, "status");
  EXPECT_EQ(text.out.find("hint:"), std::string::npos) << text;

  CommandResult window = CliFor(*t, "profile", {"--allocations", "--duration", "1s", "--out",
                                                dir().File("w.alloc")});
  EXPECT_EQ(window.exit_code, 0) << window;
  EXPECT_EQ(window.err.find("MALLOC_CONF"), std::string::npos) << window;
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"w.alloc"});
  CommandResult activate = CliFor(*t, "activate", {"--for", "10s"});
  EXPECT_EQ(activate.exit_code, 0) << activate;
}

TEST_F(ErrorTest, FailedDumpLeavesAnExistingFileUntouched) {
  TargetProcess* t = StartPlain({{"LD_PRELOAD", kAgentPreload}});  // profiling off
  ASSERT_NE(t, nullptr);
  std::string path = dir().File("keep.heap");
  ASSERT_TRUE(WriteFile(path, "precious\n"));
  // Even when told to replace it (--force), a failed dump keeps it (memprof's
  // sampler, never activated, has nothing to dump).
  ExpectCliError(CliFor(*t, "dump", {"--out", path, "--force"}), 5, "memprofctl activate");
  EXPECT_EQ(ReadFile(path), "precious\n");
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"keep.heap"});
}

TEST_F(ErrorTest, OutUnderMissingDirectory) {
  TargetProcess* t = StartProfilingReady();
  ASSERT_NE(t, nullptr);
  std::string path = dir().File("missing/sub/p.heap");
  CommandResult r = CliFor(*t, "dump", {"--out", path});
  // A usage error, as a missing --out-dir is
  // (CommandLineTest.MissingDirectoryIsExit2ForOutAndOutDirAlike).
  ExpectCliError(r, 2,
                 "output path '" + path + "': directory '" + dir().File("missing/sub") +
                     "' does not exist; create it first (mkdir -p)");
  ExpectNothingWritten();
  // Checked before contacting the agent: no dump was taken.
  EXPECT_EQ(StatusJson(*t)["dumps_served"], 0);
}

TEST_F(ErrorTest, OutUnderARegularFile) {
  TargetProcess* t = StartProfilingReady();
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(WriteFile(dir().File("file"), "x"));
  std::string path = dir().File("file/p.heap");
  CommandResult r = CliFor(*t, "dump", {"--out", path});
  ExpectCliError(r, 2, "'" + dir().File("file") + "' is not a directory");
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"file"});
  EXPECT_EQ(ReadFile(dir().File("file")), "x");
  EXPECT_EQ(StatusJson(*t)["dumps_served"], 0);
}

TEST_F(ErrorTest, OutIsADirectory) {
  TargetProcess* t = StartProfilingReady();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(::mkdir(dir().File("adir").c_str(), 0700), 0);
  ASSERT_TRUE(WriteFile(dir().File("adir/inside"), "x"));
  CommandResult r = CliFor(*t, "dump", {"--out", dir().File("adir")});
  EXPECT_NE(r.exit_code, 0) << r;
  EXPECT_TRUE(r.err.starts_with("memprofctl: error: ")) << r;
  EXPECT_NE(r.err.find(dir().File("adir")), std::string::npos) << r;
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"adir"}) << "temp file left behind";
  EXPECT_EQ(ReadFile(dir().File("adir/inside")), "x");
}

TEST_F(ErrorTest, BadDurationsAreUsageErrorsCheckedFirst) {
  TargetProcess* t = StartProfilingReady();
  ASSERT_NE(t, nullptr);
  std::string dead = std::to_string(DeadPid());
  for (const char* bad : {"30", "0s", "25h", "abc", "=-5s", "500ms", "1d"}) {
    // "=x" is passed as --for=x (a leading '-' would read as a flag).
    std::string flag = bad[0] == '=' ? std::string("--for") + bad : "--for";
    std::vector<std::string> args = {flag};
    if (bad[0] != '=') args.push_back(bad);
    SCOPED_TRACE(JoinArgv(args));
    ExpectCliError(CliFor(*t, "activate", args), 2, "invalid duration");
    // Validated before anything is contacted, even a pid that does not exist.
    args.insert(args.begin(), {"activate", "--pid", dead});
    ExpectCliError(Cli(args), 2, "invalid duration");
  }
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  // The message says what is wrong: a negative duration is not "too large".
  CommandResult negative = CliFor(*t, "activate", {"--for=-5s"});
  EXPECT_EQ(negative.err.find("too large"), std::string::npos) << negative;
}

TEST_F(ErrorTest, UnknownFlagOrCommandIsAUsageError) {
  CommandResult flag = Cli({"status", "--bogus"});
  EXPECT_EQ(flag.exit_code, 2) << flag;
  EXPECT_EQ(flag.out, "") << flag;
  EXPECT_NE(flag.err.find("--bogus"), std::string::npos) << flag;

  CommandResult command = Cli({"frobnicate"});
  EXPECT_EQ(command.exit_code, 2) << command;
  EXPECT_EQ(command.out, "") << command;
  EXPECT_NE(command.err.find("frobnicate"), std::string::npos) << command;
  // The valid choices are listed.
  EXPECT_NE(command.err.find("activate"), std::string::npos) << command;

  CommandResult pid = Cli({"status", "--pid", "notanumber"});
  EXPECT_EQ(pid.exit_code, 2) << pid;
}

TEST_F(ErrorTest, JsonIsNotAllowedWithDumpToStdout) {
  TargetProcess* t = StartProfilingReady();
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "dump", {"--out", "-", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_EQ(StatusJson(*t)["dumps_served"], 0);
}

TEST_F(ErrorTest, DumpNeedsOut) {
  TargetProcess* t = StartProfilingReady();
  ASSERT_NE(t, nullptr);
  CommandResult r = CliFor(*t, "dump");
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r;
}

TEST_F(ErrorTest, AmbiguousTargetListsTheCandidates) {
  TargetProcess* a = StartProfilingReady();
  TargetProcess* b = StartProfilingReady();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  CommandResult r = Cli({"status"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_NE(r.err.find(std::to_string(a->pid())), std::string::npos) << r;
  EXPECT_NE(r.err.find(std::to_string(b->pid())), std::string::npos) << r;
  EXPECT_NE(r.err.find("--pid"), std::string::npos) << r;
  // --pid resolves it.
  EXPECT_EQ(CliFor(*b, "status").exit_code, 0);
}

TEST_F(ErrorTest, NoAgentsAtAll) {
  ExpectCliError(Cli({"status"}), 3, "no memprof agents found in " + SocketDir());
  ExpectCliError(Cli({"dump", "--out", dir().File("p.heap")}), 3, "no memprof agents found");
  ExpectNothingWritten();
  CommandResult list = Cli({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(ParseJsonOutput(list)["targets"], json::array());
}

TEST_F(ErrorTest, MissingSocketDirectory) {
  CommandResult r = Cli({"status"}, {{"MEMPROF_SOCKET_DIR", dir().File("nope")}});
  ExpectCliError(r, 3, "no memprof agents found");
}

// A socket file nobody listens on, for a live pid (e.g. left by an earlier
// process with the same pid).
TEST_F(ErrorTest, StaleSocketOfALiveProcess) {
  TargetProcess* t = StartGlibc(/*with_agent=*/false);
  ASSERT_NE(t, nullptr);
  // Closed without unlink: connect() now gets ECONNREFUSED.
  ASSERT_NO_THROW(MakeSocketFile(t->socket_path()));
  ASSERT_EQ(::chmod(t->socket_path().c_str(), 0600), 0);
  ASSERT_TRUE(FileExists(t->socket_path()));
  ExpectCliError(CliFor(*t, "status"), 3, "stale");
  ExpectCliError(Cli({"status"}), 3, "");
}

TEST_F(ErrorTest, SigkilledTargetLeavesAStaleSocket) {
  TargetProcess* t = StartProfilingReady();
  ASSERT_NE(t, nullptr);
  pid_t pid = t->pid();
  t->process().KillAndReap();  // SIGKILL: no chance to remove the socket
  ASSERT_TRUE(FileExists(t->socket_path()));
  // list --no-prune shows it with a problem note (plain list removes it).
  CommandResult list = Cli({"list", "--json", "--no-prune"});
  ASSERT_EQ(list.exit_code, 0) << list;
  json targets = ParseJsonOutput(list)["targets"];
  ASSERT_EQ(targets.size(), 1u) << list;
  EXPECT_EQ(targets[0]["pid"], pid);
  EXPECT_NE(targets[0]["problem"].get<std::string>().find("stale"), std::string::npos) << list;
  // Any other command removes it first (it is ours), then finds no process.
  ExpectCliError(Cli({"status", "--pid", std::to_string(pid)}), 3,
                 "no process with pid " + std::to_string(pid));
  EXPECT_FALSE(FileExists(t->socket_path()));
  // Discovery does not pick a dead agent.
  ExpectCliError(Cli({"status"}), 3, "no memprof agents found");
}

// The CLI checks SO_PEERCRED before sending anything: a socket named after
// pid A but served by pid B is refused.
TEST_F(ErrorTest, SocketServedByAnotherPidIsRefused) {
  TargetProcess* a = StartGlibc(/*with_agent=*/false);
  TargetProcess* b = StartProfilingReady();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(::rename(b->socket_path().c_str(), a->socket_path().c_str()), 0);
  std::string pa = std::to_string(a->pid());
  ExpectCliError(CliFor(*a, "status"), 4, "is not served by pid " + pa);
  ExpectCliError(CliFor(*a, "dump", {"--out", dir().File("p.heap")}), 4, "is not served by pid " + pa);
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{});
}

TEST_F(ErrorTest, VersionAndHelp) {
  CommandResult version = Cli({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version;
  EXPECT_TRUE(version.out.starts_with("memprofctl ")) << version;
  CommandResult help = Cli({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help;
  for (const char* word : {"list", "status", "activate", "deactivate", "dump", "stats", "run"}) {
    EXPECT_NE(help.out.find(word), std::string::npos) << word << "\n" << help;
  }
  EXPECT_NE(help.out.find("xit code"), std::string::npos) << "exit codes documented\n" << help;
}

}  // namespace
}  // namespace memprof::integration
