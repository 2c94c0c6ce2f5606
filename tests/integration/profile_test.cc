// memprofctl profile: activate, wait, dump, put the activation state back;
// interrupted once (the profile is still written), twice (nothing is), and
// the faults in between: the target or memprofctl dying mid-window.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/debian_tools.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ProfileTest : public IntegrationTest {
 protected:
  // linked_target sampling every 16 KiB: its 400 KB/s leak lands dozens of
  // samples in a window of a second or two.
  TargetProcess* StartTarget() {
    TargetOptions options;
    options.argv = {kLinkedTarget};
    options.env = {{"MALLOC_CONF", "prof:true,prof_active:false,lg_prof_sample:14"}};
    return Start(options);
  }


  // Waits until `profile` has opened its agent-side window (one that ends
  // after `after`, in Unix ms); returns its end.
  int64_t AwaitWindow(const TargetProcess& target, int64_t after = 0) {
    json status;
    const bool open = WaitUntil(
        [&] {
          status = StatusJson(target);
          return status["profiling_active"] == true &&
                 status.value("window_end_unix_ms", int64_t{0}) > after;
        },
        seconds(30), milliseconds(50));
    EXPECT_TRUE(open) << status.dump(2);
    return status.value("window_end_unix_ms", int64_t{0});
  }

  // Whether `cli` holds an anonymous (O_TMPFILE) file of the test directory
  // open: the dump's temp file, from before the first byte until it is
  // linked into place or discarded.
  bool HoldsTempFile(const Subprocess& cli) const {
    const std::string fds = "/proc/" + std::to_string(cli.pid()) + "/fd";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(fds, ec)) {
      const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
      if (target.starts_with(dir().path() + "/#")) return true;
    }
    return false;
  }

  void ExpectInactiveWithoutWindow(const TargetProcess& target) {
    json status = StatusJson(target);
    EXPECT_EQ(status["profiling_active"], false) << status.dump(2);
    EXPECT_EQ(status["window_end_unix_ms"], 0) << status.dump(2);
  }

  // The profile at `path` is complete and is what `j` describes.
  void ExpectVerifiedProfile(const json& j, const std::string& path) {
    const std::string data = ReadFile(path);
    EXPECT_TRUE(data.starts_with("heap_v2/16384\n")) << data.substr(0, 80);
    EXPECT_NE(data.find("MAPPED_LIBRARIES:"), std::string::npos) << "truncated";
    EXPECT_EQ(j["path"], path);
    EXPECT_EQ(j["size_bytes"], data.size());
    EXPECT_EQ(j["sha256"], Sha256Hex(data));
  }
};

TEST_F(ProfileTest, ProfilesForTheDurationAndSwitchesProfilingOffAgain) {
  std::string jeprof_path;
  ASSERT_TRUE(test_support::CanRun(test_support::Jeprof(), &jeprof_path));
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("p.heap");
  CommandResult r = Cli(
      {"profile", "--pid", std::to_string(t->pid()), "--duration", "2s", "--out", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "") << "nothing on stderr with --json off a terminal";
  json j = ParseJsonOutput(r);
  ExpectVerifiedProfile(j, path);
  EXPECT_EQ(j["pid"], t->pid());
  EXPECT_EQ(j["format"], "heap");
  EXPECT_EQ(j["requested_seconds"], 2.0);
  EXPECT_GE(j["profiled_seconds"].get<double>(), 1.9) << j.dump(2);
  EXPECT_LT(j["profiled_seconds"].get<double>(), 10.0) << j.dump(2);
  EXPECT_EQ(j["ended_early"], false);
  EXPECT_EQ(j["previous"]["active"], false);
  EXPECT_EQ(j["restored"]["active"], false);
  EXPECT_EQ(j["restore_error"], "");
  ExpectInactiveWithoutWindow(*t);
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"p.heap"}) << "temp file left behind";
  // What was sampled during the window is in it.
  CommandResult jeprof = RunCommand({jeprof_path, "--text", kLinkedTarget, path}, {});
  EXPECT_NE(jeprof.out.find("LinkedTargetLeak"), std::string::npos) << jeprof;
}

TEST_F(ProfileTest, HumanSummaryGoesToStderr) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("p.heap");
  CommandResult r =
      Cli({"profile", "--pid", std::to_string(t->pid()), "--duration", "1s", "--out", path});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "");
  const std::string who = "pid " + std::to_string(t->pid()) + ": ";
  EXPECT_NE(r.err.find(who + "profiled for "), std::string::npos) << r;
  EXPECT_NE(r.err.find("heap profile to " + path + " (sha256 "), std::string::npos) << r;
  EXPECT_NE(r.err.find(who + "profiling switched off again, as it was before"), std::string::npos)
      << r;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no progress bar off a terminal\n" << r;
}

TEST_F(ProfileTest, OpenEndedActivationIsLeftAsItWas) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(CliFor(*t, "activate").exit_code, 0);
  const std::string path = dir().File("p.heap");
  CommandResult r = Cli(
      {"profile", "--pid", std::to_string(t->pid()), "--duration", "1s", "--out", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  json j = ParseJsonOutput(r);
  ExpectVerifiedProfile(j, path);
  EXPECT_EQ(j["previous"]["active"], true);
  EXPECT_EQ(j["restored"]["active"], true);
  EXPECT_EQ(j["restored"]["window_end_unix_ms"], 0);
  json status = StatusJson(*t);
  EXPECT_EQ(status["profiling_active"], true) << status.dump(2);
  EXPECT_EQ(status["window_end_unix_ms"], 0) << "still open-ended\n" << status.dump(2);
}

TEST_F(ProfileTest, ALongerWindowIsLeftExactlyAsItWas) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  CommandResult on = CliFor(*t, "activate", {"--for", "1h", "--json"});
  ASSERT_EQ(on.exit_code, 0) << on;
  const int64_t end = ParseJsonOutput(on)["current"]["window_end_unix_ms"].get<int64_t>();
  CommandResult r = Cli({"profile", "--pid", std::to_string(t->pid()), "--duration", "1s", "--out",
                         dir().File("p.heap"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(ParseJsonOutput(r)["restored"]["window_end_unix_ms"], end);
  json status = StatusJson(*t);
  EXPECT_EQ(status["profiling_active"], true);
  EXPECT_EQ(status["window_end_unix_ms"], end) << status.dump(2);
}

// A window that would end during the profile is stretched to cover it, and
// afterwards ends as it would have (here: it has ended meanwhile).
TEST_F(ProfileTest, AShorterWindowIsStretchedThenEndsAsItWould) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  CommandResult on = CliFor(*t, "activate", {"--for", "3s", "--json"});
  ASSERT_EQ(on.exit_code, 0) << on;
  const int64_t end = ParseJsonOutput(on)["current"]["window_end_unix_ms"].get<int64_t>();
  auto cli = SpawnCli({"profile", "--pid", std::to_string(t->pid()), "--duration", "5s", "--out",
                       dir().File("p.heap"), "--json"});
  ASSERT_NE(cli, nullptr);
  // Stretched to the duration plus 5s: well past the old end.
  EXPECT_GT(AwaitWindow(*t, end), end + 5000) << "the window was not stretched over the profile";
  auto exit = cli->Wait(seconds(60));
  ASSERT_TRUE(exit.has_value());
  ASSERT_EQ(exit->exit_code, 0) << cli->StderrText();
  json j = json::parse(cli->StdoutText());
  EXPECT_GE(j["profiled_seconds"].get<double>(), 4.9) << j.dump(2);
  EXPECT_EQ(j["previous"]["active"], true) << j.dump(2);
  EXPECT_EQ(j["previous"]["window_end_unix_ms"], end);
  EXPECT_EQ(j["restored"]["active"], false) << j.dump(2);
  ExpectInactiveWithoutWindow(*t);
}

// The activation generation moves by exactly profile's own two changes (its
// window, and putting the state back), and the JSON says whose they were.
TEST_F(ProfileTest, NobodyInterferingMeansTheStateIsPutBackConditionally) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const uint64_t before = StatusJson(*t)["activation_generation"].get<uint64_t>();
  ASSERT_NE(before, 0u) << "the agent counts activation changes";
  CommandResult r = Cli({"profile", "--pid", std::to_string(t->pid()), "--duration", "1s", "--out",
                         dir().File("p.heap"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "");
  json j = ParseJsonOutput(r);
  EXPECT_EQ(j["restore_skipped"], false) << j.dump(2);
  EXPECT_EQ(j["restore_skipped_reason"], "");
  EXPECT_EQ(j["generation_opened"], before + 1) << j.dump(2);
  EXPECT_EQ(j["generation_left"], before + 2) << j.dump(2);
  EXPECT_EQ(j["restored"]["active"], false);
  ExpectInactiveWithoutWindow(*t);
  EXPECT_EQ(StatusJson(*t)["activation_generation"], before + 2);
}

// Someone switches profiling off during profile's window: profile leaves it
// off without switching it off once more (the generation is theirs), says
// so in its summary, and still succeeds.
TEST_F(ProfileTest, SomeoneElsesDeactivationDuringTheWindowIsLeftAndReported) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("p.heap");
  auto cli =
      SpawnCli({"profile", "--pid", std::to_string(t->pid()), "--duration", "5s", "--out", path});
  ASSERT_NE(cli, nullptr);
  AwaitWindow(*t);
  const uint64_t opened = StatusJson(*t)["activation_generation"].get<uint64_t>();
  CommandResult off = CliFor(*t, "deactivate", {"--json"});
  ASSERT_EQ(off.exit_code, 0) << off;
  const uint64_t theirs = ParseJsonOutput(off)["activation_generation"].get<uint64_t>();
  EXPECT_EQ(theirs, opened + 1);
  auto exit = cli->Wait(seconds(60));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->ShellCode(), 0) << cli->StderrText();
  const std::string err = cli->StderrText();
  EXPECT_NE(err.find("\nprofiling state of pid " + std::to_string(t->pid()) +
                     " was changed by someone else during the window (generation " +
                     std::to_string(opened) + " -> " + std::to_string(theirs) +
                     "); leaving it as they set it (inactive)\n"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("switched off again"), std::string::npos) << err;
  EXPECT_TRUE(ReadFile(path).starts_with("heap_v2/")) << "the profile is written all the same";
  ExpectInactiveWithoutWindow(*t);
  EXPECT_EQ(StatusJson(*t)["activation_generation"], theirs) << "profile changed it once more";
}

// Someone opens a window of their own during profile's: profile leaves it
// open (before, it switched profiling off under them).
TEST_F(ProfileTest, SomeoneElsesWindowDuringTheWindowIsLeftOpen) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  auto cli = SpawnCli({"profile", "--pid", std::to_string(t->pid()), "--duration", "5s", "--out",
                       dir().File("p.heap")});
  ASSERT_NE(cli, nullptr);
  AwaitWindow(*t);
  CommandResult on = CliFor(*t, "activate", {"--for", "1h", "--json"});
  ASSERT_EQ(on.exit_code, 0) << on;
  const int64_t end = ParseJsonOutput(on)["current"]["window_end_unix_ms"].get<int64_t>();
  auto exit = cli->Wait(seconds(60));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->ShellCode(), 0) << cli->StderrText();
  EXPECT_NE(cli->StderrText().find("was changed by someone else during the window"),
            std::string::npos)
      << cli->StderrText();
  EXPECT_NE(cli->StderrText().find("leaving it as they set it (active until "), std::string::npos)
      << cli->StderrText();
  json status = StatusJson(*t);
  EXPECT_EQ(status["profiling_active"], true) << status.dump(2);
  EXPECT_EQ(status["window_end_unix_ms"], end) << "their window, untouched\n" << status.dump(2);
}

TEST_F(ProfileTest, SomeoneElsesChangeIsInTheJsonAndOneWarningLine) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("p.heap");
  auto cli = SpawnCli(
      {"profile", "--pid", std::to_string(t->pid()), "--duration", "5s", "--out", path, "--json"});
  ASSERT_NE(cli, nullptr);
  AwaitWindow(*t);
  const uint64_t opened = StatusJson(*t)["activation_generation"].get<uint64_t>();
  CommandResult on = CliFor(*t, "activate", {"--for", "1h", "--json"});
  ASSERT_EQ(on.exit_code, 0) << on;
  const json theirs = ParseJsonOutput(on);
  const uint64_t generation = theirs["activation_generation"].get<uint64_t>();
  auto exit = cli->Wait(seconds(60));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->ShellCode(), 0) << cli->StderrText();
  json j = json::parse(cli->StdoutText(), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << cli->StdoutText();
  ExpectVerifiedProfile(j, path);
  EXPECT_EQ(j["restore_skipped"], true) << j.dump(2);
  EXPECT_EQ(j["restore_skipped_reason"], "changed by someone else during the window (generation " +
                                             std::to_string(opened) + " -> " +
                                             std::to_string(generation) + ")");
  EXPECT_EQ(j["restore_error"], "");
  EXPECT_EQ(j["generation_opened"], opened);
  EXPECT_EQ(j["generation_left"], generation);
  EXPECT_EQ(j["previous"]["active"], false);
  EXPECT_EQ(j["restored"], theirs["current"]) << "the state as they left it";
  const std::string err = cli->StderrText();
  EXPECT_TRUE(err.starts_with("memprofctl: warning: profiling state of pid " +
                              std::to_string(t->pid()) + " was changed by someone else"))
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line\n" << err;
  json status = StatusJson(*t);
  EXPECT_EQ(status["profiling_active"], true);
  EXPECT_EQ(status["activation_generation"], generation);
}

class ProfileSignalTest : public ProfileTest, public ::testing::WithParamInterface<int> {};

TEST_P(ProfileSignalTest, AnInterruptEndsTheWindowEarlyAndStillWritesTheProfile) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("p.heap");
  auto cli = SpawnCli(
      {"profile", "--pid", std::to_string(t->pid()), "--duration", "60s", "--out", path, "--json"});
  ASSERT_NE(cli, nullptr);
  AwaitWindow(*t);
  const int64_t interrupted_at = NowUnixMs();
  cli->Signal(GetParam());
  auto exit = cli->Wait(seconds(30));
  ASSERT_TRUE(exit.has_value()) << "memprofctl ignored the signal";
  EXPECT_EQ(exit->ShellCode(), 0) << cli->StderrText();
  EXPECT_LT(NowUnixMs() - interrupted_at, 20'000);
  json j = json::parse(cli->StdoutText(), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << cli->StdoutText();
  ExpectVerifiedProfile(j, path);
  EXPECT_EQ(j["ended_early"], true);
  EXPECT_LT(j["profiled_seconds"].get<double>(), 60.0);
  EXPECT_EQ(j["restored"]["active"], false);
  EXPECT_NE(cli->StderrText().find("interrupted: profiling window ended after "), std::string::npos)
      << cli->StderrText();
  ExpectInactiveWithoutWindow(*t);
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{"p.heap"});
}

// The second signal arrives while the dump waits for the agent (the target
// is stopped with SIGSTOP, so the dump cannot finish first): nothing is
// written, profiling is still switched off, and memprofctl dies by it.
TEST_P(ProfileSignalTest, ASecondInterruptAbortsAndLeavesNoFile) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string path = dir().File("p.heap");
  auto cli = SpawnCli(
      {"-v", "profile", "--pid", std::to_string(t->pid()), "--duration", "60s", "--out", path});
  ASSERT_NE(cli, nullptr);
  AwaitWindow(*t);
  // The agent opens the window before its reply to Activate is out: stopped
  // in between, it would leave memprofctl waiting for that reply rather
  // than in the window. Its log line says it has the reply.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return cli->StderrText().find("pid " + std::to_string(t->pid()) +
                                      ": profiling window of ") != std::string::npos;
      },
      seconds(30), milliseconds(5)))
      << cli->StderrText();
  t->process().Signal(SIGSTOP);
  cli->Signal(SIGINT);
  EXPECT_TRUE(WaitUntil([&] { return HoldsTempFile(*cli); }, seconds(30), milliseconds(1)))
      << "the dump did not start: " << cli->StderrText();
  cli->Signal(GetParam() == SIGINT ? SIGINT : SIGTERM);
  EXPECT_TRUE(WaitUntil([&] { return !HoldsTempFile(*cli); }, seconds(30), milliseconds(5)))
      << "the dump was not abandoned";
  t->process().Signal(SIGCONT);  // the restore may now reach the agent
  auto exit = cli->Wait(seconds(60));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->ShellCode(), 128 + GetParam()) << cli->StderrText();
  EXPECT_NE(cli->StderrText().find("memprofctl: error: profile aborted by a second interrupt; " +
                                   path + " was not written"),
            std::string::npos)
      << cli->StderrText();
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{}) << "partial or temp file left behind";
  ExpectInactiveWithoutWindow(*t);
}

std::string SignalName(const ::testing::TestParamInfo<int>& param) {
  return param.param == SIGINT ? "Sigint" : "Sigterm";
}

INSTANTIATE_TEST_SUITE_P(Signals, ProfileSignalTest, ::testing::Values(SIGINT, SIGTERM),
                         SignalName);

TEST_F(ProfileTest, TargetDyingMidWindowIsExit3AndWritesNothing) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const pid_t pid = t->pid();
  auto cli = SpawnCli({"profile", "--pid", std::to_string(pid), "--duration", "60s", "--out",
                       dir().File("p.heap")});
  ASSERT_NE(cli, nullptr);
  AwaitWindow(*t);
  t->process().KillAndReap();
  auto exit = cli->Wait(seconds(20));
  ASSERT_TRUE(exit.has_value()) << "memprofctl did not notice the target died";
  EXPECT_EQ(exit->ShellCode(), 3) << cli->StderrText();
  EXPECT_EQ(cli->StdoutText(), "");
  const std::string err = cli->StderrText();
  EXPECT_TRUE(err.starts_with("memprofctl: error: pid " + std::to_string(pid))) << err;
  EXPECT_NE(err.find("exited during the profiling window, after "), std::string::npos) << err;
  EXPECT_NE(err.find(" of 1m; no profile was written"), std::string::npos) << err;
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{}) << "partial or temp file left behind";
}

// memprofctl SIGKILLed mid-window cannot switch profiling off: the agent's
// window (the duration plus a margin) does.
TEST_F(ProfileTest, AgentClosesTheWindowWhenMemprofctlIsKilled) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const int64_t started = NowUnixMs();
  auto cli = SpawnCli({"profile", "--pid", std::to_string(t->pid()), "--duration", "2s", "--out",
                       dir().File("p.heap")});
  ASSERT_NE(cli, nullptr);
  const int64_t end = AwaitWindow(*t);
  EXPECT_GE(end, started + 2000 + 5000 - 500) << "the window is the duration plus 5s";
  EXPECT_LE(end, NowUnixMs() + 2000 + 5000);
  cli->KillAndReap();
  EXPECT_EQ(StatusJson(*t)["profiling_active"], true) << "nobody has ended the window yet";
  json status;
  const bool ended = WaitUntil(
      [&] {
        status = StatusJson(*t);
        return status["profiling_active"] == false;
      },
      seconds(40), milliseconds(200));
  EXPECT_TRUE(ended) << status.dump(2);
  EXPECT_GE(NowUnixMs(), end - 50) << "profiling ended before the window did";
  EXPECT_EQ(status["window_end_unix_ms"], 0);
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{}) << "a SIGKILL must leave nothing";
}

TEST_F(ProfileTest, BadInputIsRefusedBeforeAnythingChanges) {
  TargetProcess* t = StartTarget();
  ASSERT_NE(t, nullptr);
  const std::string p = std::to_string(t->pid());
  const std::string out = dir().File("p.heap");
  struct Bad {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
  };
  const std::vector<Bad> calls = {
      {{"--duration", "30", "--out", out},
       2,
       "profile: --duration: invalid duration '30': missing unit"},
      {{"--duration", "0s", "--out", out}, 2, "invalid duration '0s': must be between 1s and 24h"},
      {{"--duration", "25h", "--out", out}, 2, "must be between 1s and 24h"},
      {{"--out", out}, 2, "--duration is required"},
      {{"--duration", "5s"}, 2, "--out is required"},
      {{"--duration", "5s", "--out", out, "--format", "pdf"},
       2,
       "unknown profile format 'pdf' (valid: heap, text, collapsed, pprof, svg, json)"},
      {{"--duration", "5s", "--out", "-", "--json"},
       2,
       "--json cannot be combined with --out - (the profile itself goes to stdout)"},
      {{"--duration", "5s", "--out", dir().File("missing/p.heap")},
       2,
       "directory '" + dir().File("missing") + "' does not exist; create it first (mkdir -p)"},
  };
  for (const Bad& call : calls) {
    std::vector<std::string> args = {"profile", "--pid", p};
    args.insert(args.end(), call.args.begin(), call.args.end());
    SCOPED_TRACE(JoinArgv(args));
    ExpectCliError(Cli(args), call.exit_code, call.message);
  }
  ExpectInactiveWithoutWindow(*t);
  EXPECT_EQ(StatusJson(*t)["dumps_served"], 0);
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{});
}

// jemalloc started without prof:true, and glibc's malloc: memprof's own
// sampler serves `profile` as jemalloc's would, and the activation is left
// as it was.
TEST_F(ProfileTest, ProcessesWithoutAProfilerOfTheirOwnAreProfiledByMemprof) {
  TargetOptions off;
  off.argv = {kPlainTarget};
  off.env = {{"LD_PRELOAD", kAgentPreload}};  // jemalloc, but started without prof:true
  TargetProcess* no_prof = Start(off);
  ASSERT_NE(no_prof, nullptr);
  TargetOptions glibc;
  glibc.argv = {kGlibcTarget};
  glibc.env = {{"LD_PRELOAD", kAgentPreload}};
  TargetProcess* no_jemalloc = Start(glibc);
  ASSERT_NE(no_jemalloc, nullptr);
  for (TargetProcess* t : {no_prof, no_jemalloc}) {
    const std::string out = dir().File("p" + std::to_string(t->pid()) + ".heap");
    CommandResult r = Cli({"profile", "--pid", std::to_string(t->pid()), "--duration", "1s",
                           "--out", out});
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(ReadFile(out).starts_with("heap_v2/")) << ReadFile(out).substr(0, 100);
    EXPECT_NE(ReadFile(out).find("\n# memprof_sampler since_unix_ms="), std::string::npos);
    const nlohmann::json status = StatusJson(*t);
    EXPECT_EQ(status["sampler"], "memprof");
    EXPECT_EQ(status["profiling_active"], false) << "profile leaves the activation as it was";
  }
}

}  // namespace
}  // namespace memprof::integration
