// Multi-target runs (--pid A,B,C, --all, --targets FILE): one outcome per
// target, a failing, vanished or hanging target never stops the others, and
// the exit code is 6 when any failed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/fd.h"
#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/occurrences.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class MultiTargetTest : public IntegrationTest {
 protected:
  TargetProcess* StartPlain() { return StartShape(Shape::kPreloaded); }

  // linked_target sampling every 16 KiB, so a short window has samples.
  TargetProcess* StartLinked() {
    TargetOptions options;
    options.argv = {kLinkedTarget};
    options.env = {{"MALLOC_CONF", "prof:true,prof_active:false,lg_prof_sample:14"}};
    return Start(options);
  }

  std::vector<TargetProcess*> StartPlainTargets(int n) {
    std::vector<TargetProcess*> targets;
    for (int i = 0; i < n; ++i) {
      TargetProcess* t = StartPlain();
      if (t == nullptr) return {};
      targets.push_back(t);
    }
    return targets;
  }

  void AwaitActive(const TargetProcess& target) {
    EXPECT_TRUE(WaitUntil([&] { return StatusJson(target)["profiling_active"] == true; },
                          seconds(30), milliseconds(50)))
        << "pid " << target.pid() << " never became active";
  }
};

std::string Pids(const std::vector<TargetProcess*>& targets) {
  std::string out;
  for (const TargetProcess* t : targets) out += (out.empty() ? "" : ",") + std::to_string(t->pid());
  return out;
}

// Every line of stdout parsed as JSON, keyed by the "target" it names.
std::map<std::string, json> JsonLines(const CommandResult& r) {
  std::map<std::string, json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    json parsed = json::parse(line, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << "not a JSON line: " << line;
    if (parsed.is_discarded()) continue;
    lines[parsed.value("target", std::string())] = parsed;
  }
  return lines;
}

// Each outcome line has every key, always with the same type.
void ExpectOutcomeShape(const json& line) {
  EXPECT_TRUE(line["target"].is_string()) << line;
  EXPECT_TRUE(line["pid"].is_number_integer()) << line;
  EXPECT_TRUE(line["command"].is_string()) << line;
  EXPECT_TRUE(line["address"].is_string()) << line;
  EXPECT_TRUE(line["ok"].is_boolean()) << line;
  EXPECT_TRUE(line["exit_code"].is_number_integer()) << line;
  EXPECT_TRUE(line["error_code"].is_string()) << line;
  EXPECT_TRUE(line["error"].is_string()) << line;
  EXPECT_TRUE(line["elapsed_ms"].is_number_integer()) << line;
  EXPECT_TRUE(line["result"].is_object()) << line;
}

TEST_F(MultiTargetTest, StatusAllIsOneJsonLinePerTarget) {
  auto targets = StartPlainTargets(3);
  ASSERT_EQ(targets.size(), 3u);
  CommandResult r = Cli({"status", "--all", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  for (const TargetProcess* t : targets) {
    const json& line = lines[std::to_string(t->pid())];
    ExpectOutcomeShape(line);
    EXPECT_EQ(line["ok"], true) << line;
    EXPECT_EQ(line["exit_code"], 0) << line;
    EXPECT_EQ(line["pid"], t->pid()) << line;
    EXPECT_EQ(line["result"]["pid"], t->pid()) << line;
    EXPECT_EQ(line["result"]["profiling_enabled"], true) << line;
  }
}

TEST_F(MultiTargetTest, HumanOutputHasOneBlockPerTarget) {
  auto targets = StartPlainTargets(2);
  ASSERT_EQ(targets.size(), 2u);
  CommandResult r = Cli({"status", "--pid", Pids(targets)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const TargetProcess* t : targets) {
    EXPECT_NE(r.out.find("== pid " + std::to_string(t->pid()) + " (plain_target) =="),
              std::string::npos)
        << r.out;
  }
  CommandResult a = Cli({"activate", "--pid", std::to_string(targets[0]->pid()), "--pid",
                         std::to_string(targets[1]->pid())});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  for (const TargetProcess* t : targets) {
    EXPECT_NE(a.out.find("pid " + std::to_string(t->pid()) + ": profiling activated"),
              std::string::npos)
        << a.out;
    EXPECT_EQ(StatusJson(*t)["profiling_active"], true);
  }
}

TEST_F(MultiTargetTest, DumpAllWritesOneVerifiedFilePerTarget) {
  auto targets = StartPlainTargets(3);
  ASSERT_EQ(targets.size(), 3u);
  ASSERT_EQ(Cli({"activate", "--all"}).exit_code, 0);
  TempDir out = *TempDir::Create("memprof-multi-out");
  CommandResult r = Cli({"dump", "--all", "--out-dir", out.path(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  std::set<std::string> files;
  for (const TargetProcess* t : targets) {
    const json& line = lines[std::to_string(t->pid())];
    ASSERT_EQ(line["ok"], true) << line;
    const std::string path = line["result"].value("path", std::string());
    const std::string name = path.substr(path.rfind('/') + 1);
    EXPECT_NE(name.find("-" + std::to_string(t->pid()) + "-"), std::string::npos) << name;
    EXPECT_TRUE(name.ends_with("Z.heap")) << name;
    const std::string data = ReadFile(path);
    EXPECT_TRUE(data.starts_with("heap_v2/")) << path;
    EXPECT_EQ(Sha256Hex(data), line["result"]["sha256"]) << path;
    files.insert(name);
  }
  std::vector<std::string> listed = out.List();
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), files);
}

// A dead pid, a process without an agent and two live agents: the live ones
// are served, the others reported, and the run exits 6.
TEST_F(MultiTargetTest, UnreachableTargetsDoNotStopTheOthers) {
  auto live = StartPlainTargets(2);
  ASSERT_EQ(live.size(), 2u);
  TargetProcess* no_agent = StartWithoutAgent();
  ASSERT_NE(no_agent, nullptr);
  TargetProcess* gone = StartPlain();
  ASSERT_NE(gone, nullptr);
  const pid_t gone_pid = gone->pid();
  gone->process().KillAndReap();
  const std::string pids = std::to_string(live[0]->pid()) + "," + std::to_string(gone_pid) + "," +
                           std::to_string(no_agent->pid()) + "," + std::to_string(live[1]->pid());
  CommandResult r = Cli({"stats", "--pid", pids, "--json"});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  for (const TargetProcess* t : live) {
    const json& line = lines[std::to_string(t->pid())];
    EXPECT_EQ(line["ok"], true) << line;
    EXPECT_GT(line["result"].value("allocated", 0), 0) << line;
  }
  const json& dead = lines[std::to_string(gone_pid)];
  ExpectOutcomeShape(dead);
  EXPECT_EQ(dead["ok"], false);
  EXPECT_EQ(dead["exit_code"], 3);
  EXPECT_EQ(dead["error"], "no process with pid " + std::to_string(gone_pid));
  const json& plain = lines[std::to_string(no_agent->pid())];
  EXPECT_EQ(plain["exit_code"], 3) << plain;
  EXPECT_NE(plain["error"].get<std::string>().find("has no memprof agent"), std::string::npos);
  EXPECT_NE(r.err.find("memprofctl: error: 2 of 4 targets failed: "), std::string::npos) << r.err;
}

// A socket whose listener never answers (here: this test process, which
// never accepts) holds its worker only until --timeout.
TEST_F(MultiTargetTest, HangingTargetIsCutOffAtTheTimeout) {
  TargetProcess* live = StartPlain();
  ASSERT_NE(live, nullptr);
  const std::string path = dir().File(std::to_string(::getpid()) + ".sock");
  Fd listener;
  ASSERT_NO_THROW(listener = ListenOn(path));
  CommandResult r =
      Cli({"status", "--pid", std::to_string(::getpid()) + "," + std::to_string(live->pid()),
           "--timeout", "1s", "--json"});
  ::unlink(path.c_str());
  EXPECT_EQ(r.exit_code, 6) << r.err;
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[std::to_string(live->pid())]["ok"], true);
  const json& hung = lines[std::to_string(::getpid())];
  EXPECT_EQ(hung["ok"], false) << hung;
  EXPECT_EQ(hung["exit_code"], 3) << hung;
  EXPECT_LT(hung["elapsed_ms"].get<int64_t>(), 30000) << hung;
}

TEST_F(MultiTargetTest, TargetsFileMixesPidsAndSockets) {
  auto targets = StartPlainTargets(2);
  ASSERT_EQ(targets.size(), 2u);
  const std::string socket = SocketDir() + "/" + std::to_string(targets[1]->pid()) + ".sock";
  const std::string file = dir().File("targets.txt");
  ASSERT_TRUE(WriteFile(file, "# two ways to name a target\n" + std::to_string(targets[0]->pid()) +
                                  "\n\n  unix:" + socket + "  \n"));
  CommandResult r = Cli({"deactivate", "--targets", file, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[std::to_string(targets[0]->pid())]["pid"], targets[0]->pid());
  EXPECT_EQ(lines["unix:" + socket]["pid"], targets[1]->pid());
  EXPECT_EQ(lines["unix:" + socket]["result"]["pid"], targets[1]->pid());
}

TEST_F(MultiTargetTest, BadTargetsFileIsRefusedBeforeAnyTargetIsTouched) {
  TargetProcess* t = StartPlain();
  ASSERT_NE(t, nullptr);
  const std::string file = dir().File("targets.txt");
  ASSERT_TRUE(WriteFile(file, std::to_string(t->pid()) + "\nunix:relative.sock\n"));
  ExpectCliError(Cli({"activate", "--targets", file}), 2,
                 file + ":2: 'unix:relative.sock': a Unix socket path must be absolute");
  ASSERT_TRUE(WriteFile(file, std::to_string(t->pid()) + "\n\nweb1\n"));
  ExpectCliError(Cli({"activate", "--targets", file}), 2,
                 file + ":3: 'web1' is neither a pid, nor unix:/path/to/socket, nor HOST:PORT");
  ASSERT_TRUE(WriteFile(file, "# nothing\n"));
  ExpectCliError(Cli({"activate", "--targets", file}), 2,
                 "--targets: " + file + " lists no targets");
  ExpectCliError(
      Cli({"activate", "--targets", dir().File("missing.txt")}), 2,
      "--targets: cannot read " + dir().File("missing.txt") + ": No such file or directory");
  EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
}

TEST_F(MultiTargetTest, AllWithNameTakesEveryMatchAndOnlyThose) {
  TargetProcess* plain = StartPlain();
  TargetProcess* linked = StartLinked();
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(linked, nullptr);
  CommandResult r = Cli({"status", "--all", "--name", "^linked", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_EQ(lines.begin()->second["pid"], linked->pid());
  ExpectCliError(Cli({"status", "--all", "--name", "^no-such$"}), 3,
                 "--all: no process with a memprof agent matches --name '^no-such$'");
}

TEST_F(MultiTargetTest, PrometheusForSeveralTargetsIsOneExposition) {
  auto targets = StartPlainTargets(2);
  ASSERT_EQ(targets.size(), 2u);
  CommandResult r = Cli({"stats", "--pid", Pids(targets) + ",999999999", "--format", "prometheus"});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_EQ(test_support::CountOccurrences(r.out, "# TYPE memprof_up "), 1u) << r.out;
  for (const TargetProcess* t : targets) {
    EXPECT_NE(r.out.find("memprof_up{pid=\"" + std::to_string(t->pid()) +
                         "\",command=\"plain_target\"} 1"),
              std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.err.find("999999999: no process with pid 999999999"), std::string::npos) << r.err;
}

// profile --all: every window runs at once; the target that dies mid-window
// fails alone, and the others' profiles are written.
TEST_F(MultiTargetTest, ProfileAllSurvivesATargetDyingMidWindow) {
  TargetProcess* stays = StartLinked();
  TargetProcess* dies = StartLinked();
  ASSERT_NE(stays, nullptr);
  ASSERT_NE(dies, nullptr);
  TempDir out = *TempDir::Create("memprof-multi-profile");
  auto cli = SpawnCli({"profile", "--all", "--duration", "4s", "--out-dir", out.path(), "--json"});
  ASSERT_NE(cli, nullptr);
  AwaitActive(*stays);
  AwaitActive(*dies);
  const pid_t dead_pid = dies->pid();
  dies->process().KillAndReap();
  auto exit = cli->Wait(seconds(60));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->ShellCode(), 6) << cli->StderrText();
  CommandResult r;
  r.out = cli->StdoutText();
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  const json& ok = lines[std::to_string(stays->pid())];
  EXPECT_EQ(ok["ok"], true) << ok;
  const std::string path = ok["result"].value("path", std::string());
  EXPECT_TRUE(ReadFile(path).starts_with("heap_v2/")) << path;
  const json& failed = lines[std::to_string(dead_pid)];
  EXPECT_EQ(failed["exit_code"], 3) << failed;
  EXPECT_NE(failed["error"].get<std::string>().find("exited during the profiling window"),
            std::string::npos)
      << failed;
  EXPECT_EQ(out.List(), std::vector<std::string>{path.substr(path.rfind('/') + 1)});
  EXPECT_EQ(StatusJson(*stays)["profiling_active"], false) << "profile did not restore the state";
}

// Ctrl-C during `profile --all` ends every window early and still writes
// every profile (exit 0), then puts each process back as it was.
TEST_F(MultiTargetTest, InterruptDuringProfileAllStillWritesEveryProfile) {
  TargetProcess* a = StartLinked();
  TargetProcess* b = StartLinked();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  TempDir out = *TempDir::Create("memprof-multi-interrupt");
  auto cli = SpawnCli({"profile", "--all", "--duration", "60s", "--out-dir", out.path(), "--json"});
  ASSERT_NE(cli, nullptr);
  AwaitActive(*a);
  AwaitActive(*b);
  cli->Signal(SIGINT);
  auto exit = cli->Wait(seconds(30));
  ASSERT_TRUE(exit.has_value()) << "the windows did not end early";
  EXPECT_EQ(exit->ShellCode(), 0) << cli->StderrText();
  CommandResult r;
  r.out = cli->StdoutText();
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (const TargetProcess* t : {a, b}) {
    const json& line = lines[std::to_string(t->pid())];
    EXPECT_EQ(line["ok"], true) << line;
    EXPECT_EQ(line["result"]["ended_early"], true) << line;
    EXPECT_TRUE(ReadFile(line["result"].value("path", std::string())).starts_with("heap_v2/"));
    EXPECT_EQ(StatusJson(*t)["profiling_active"], false) << "pid " << t->pid();
  }
  EXPECT_EQ(out.List().size(), 2u);
}

// profile --all decides per target: the one whose activation someone else
// changed during the window keeps their state (and its line says so), the
// other is switched off again; both profiles count as successes.
TEST_F(MultiTargetTest, ProfileAllLeavesOnlyTheChangedTargetAsSomeoneElseSetIt) {
  TargetProcess* changed = StartLinked();
  TargetProcess* untouched = StartLinked();
  ASSERT_NE(changed, nullptr);
  ASSERT_NE(untouched, nullptr);
  TempDir out = *TempDir::Create("memprof-multi-generation");
  auto cli = SpawnCli({"profile", "--all", "--duration", "5s", "--out-dir", out.path(), "--json"});
  ASSERT_NE(cli, nullptr);
  AwaitActive(*changed);
  AwaitActive(*untouched);
  CommandResult on = CliFor(*changed, "activate", {"--for", "1h", "--json"});
  ASSERT_EQ(on.exit_code, 0) << on;
  const int64_t end = ParseJsonOutput(on)["current"]["window_end_unix_ms"].get<int64_t>();
  auto exit = cli->Wait(seconds(60));
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->ShellCode(), 0) << cli->StderrText();
  CommandResult r;
  r.out = cli->StdoutText();
  auto lines = JsonLines(r);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  const json& skipped = lines[std::to_string(changed->pid())];
  EXPECT_EQ(skipped["ok"], true) << skipped;
  EXPECT_EQ(skipped["result"]["restore_skipped"], true) << skipped;
  EXPECT_EQ(skipped["result"]["restored"]["window_end_unix_ms"], end) << skipped;
  const json& restored = lines[std::to_string(untouched->pid())];
  EXPECT_EQ(restored["ok"], true) << restored;
  EXPECT_EQ(restored["result"]["restore_skipped"], false) << restored;
  EXPECT_EQ(restored["result"]["restored"]["active"], false) << restored;
  EXPECT_NE(cli->StderrText().find("profiling state of pid " + std::to_string(changed->pid()) +
                                   " was changed by someone else"),
            std::string::npos)
      << cli->StderrText();
  json status = StatusJson(*changed);
  EXPECT_EQ(status["profiling_active"], true) << status.dump(2);
  EXPECT_EQ(status["window_end_unix_ms"], end) << status.dump(2);
  EXPECT_EQ(StatusJson(*untouched)["profiling_active"], false);
}

// A missing --out-dir is one error before any target is asked (not one per
// target after their dumps, or after profile windows that then have nowhere
// to go): exit 2, the message once, no target's profiling changed.
TEST_F(MultiTargetTest, AMissingOutDirIsRefusedOnceBeforeAnyTarget) {
  auto targets = StartPlainTargets(2);
  ASSERT_EQ(targets.size(), 2u);
  const std::string missing = dir().File("no-such-dir");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"dump", "--all", "--out-dir", missing},
        std::vector<std::string>{"profile", "--all", "--duration", "1s", "--out-dir", missing}}) {
    CommandResult r = Cli(args);
    ExpectCliError(r, 2, "--out-dir '" + missing + "' does not exist; create it first (mkdir -p)");
    EXPECT_EQ(test_support::CountOccurrences(r.err, "does not exist"), 1u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  for (const TargetProcess* t : targets) EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST_F(MultiTargetTest, WhatOneTargetOnlyCanDoIsAUsageError) {
  auto targets = StartPlainTargets(2);
  ASSERT_EQ(targets.size(), 2u);
  const std::string pids = Pids(targets);
  ExpectCliError(Cli({"dump", "--pid", pids, "--out", dir().File("x.heap")}), 2,
                 "with several targets, dump writes one file per target: use --out-dir DIR");
  ExpectCliError(Cli({"profile", "--all", "--duration", "1s", "--out", dir().File("x.heap")}), 2,
                 "with several targets, profile writes one file per target: use --out-dir DIR");
  ExpectCliError(Cli({"stats", "--all", "--watch", "1s"}), 2, "--watch follows one target");
  ExpectCliError(Cli({"dump", "--all", "--every", "1s", "--out-dir", dir().path()}), 2,
                 "--every follows one target");
  ExpectCliError(Cli({"dump", "--all", "--captured", "--follow", "--out-dir", dir().path()}), 2,
                 "--follow follows one target");
  ExpectCliError(Cli({"status", "--all", "--parallel", "0"}), 2, "--parallel");
  ExpectCliError(Cli({"status", "--all", "--pid", pids}), 2, "excludes");
  ExpectCliError(Cli({"status", "--target", "db7:7070"}), 2,
                 "remote targets need --tls-ca, --tls-cert and --tls-key");
  ExpectCliError(Cli({"status", "--target", "db7"}), 2, "invalid remote target 'db7': missing ':PORT'");
  for (const TargetProcess* t : targets) EXPECT_EQ(StatusJson(*t)["profiling_active"], false);
  EXPECT_EQ(NonSocketEntries(), std::vector<std::string>{});
}

}  // namespace
}  // namespace memprof::integration
