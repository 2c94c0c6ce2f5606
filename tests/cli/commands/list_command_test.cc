#include "cli/commands/list_command.h"

#include <unistd.h>

#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/io/logging.h"
#include "cli/io/user_name.h"
#include "common/fd.h"
#include "tests/cli/testing/command_test_fixture.h"

namespace memprof::cli {
namespace {

using testing::MakeProcStat;

class ListCommandTest : public testing::CommandTest {
 protected:
  void TearDown() override { ConfigureLogging(std::cerr, 0); }

  // A process without a socket of its own in the fake /proc.
  void AddProc(pid_t pid, const std::string& name) {
    testing::MakeProcEntry(proc_, pid, name, {}, 1000, {"./" + name});
  }
};

memprof::v1::StatusResponse Status(bool enabled, bool active) {
  memprof::v1::StatusResponse s;
  s.set_allocator(memprof::v1::ALLOCATOR_KIND_JEMALLOC);
  s.set_profiling_supported(true);
  s.set_profiling_enabled(enabled);
  s.set_profiling_active(active);
  s.set_agent_version("0.1.0");
  return s;
}

TEST_F(ListCommandTest, ProfilingColumnValues) {
  // Covered through BuildListRow so the list wording stays in one place.
  SocketEntry entry;
  entry.target = Target{42, "/s/42.sock", "demo"};
  entry.process_exists = true;
  entry.uid = 1000;
  client_.status_result = Status(true, true);
  EXPECT_EQ(BuildListRow(entry, client_, discovery_).profiling, "active");
  client_.status_result = Status(true, false);
  EXPECT_EQ(BuildListRow(entry, client_, discovery_).profiling, "inactive");
  client_.status_result = Status(false, false);
  EXPECT_EQ(BuildListRow(entry, client_, discovery_).profiling, "off");
  auto unsupported = Status(false, false);
  unsupported.set_profiling_supported(false);
  client_.status_result = unsupported;
  EXPECT_EQ(BuildListRow(entry, client_, discovery_).profiling, "unsupported");
  memprof::v1::StatusResponse glibc;
  glibc.set_allocator(memprof::v1::ALLOCATOR_KIND_GLIBC);
  client_.status_result = glibc;
  EXPECT_EQ(BuildListRow(entry, client_, discovery_).profiling, "n/a");
}

TEST_F(ListCommandTest, JsonListsLiveAndStaleTargetsWithStableTypes) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");  // stale
  MakeProcStat(proc_, kPid, 7);
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{.json = true, .prune = false}, discovery_, client_, out_));
  EXPECT_EQ(client_.calls, 1);  // the stale socket is not contacted
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["socket_dir"], sockets_);
  ASSERT_EQ(j["targets"].size(), 2u);
  for (const auto& t : j["targets"]) {
    for (const char* key : {"pid", "ppid", "uid", "real_uid"}) {
      EXPECT_TRUE(t.at(key).is_number_integer()) << key;
    }
    for (const char* key :
         {"user", "command", "allocator", "sampler", "agent_version", "socket", "problem"}) {
      EXPECT_TRUE(t.at(key).is_string()) << key;
    }
    EXPECT_TRUE(t.at("profiling_enabled").is_boolean());
    EXPECT_TRUE(t.at("profiling_active").is_boolean());
    for (const char* key : {"in_container", "stale", "removed"}) {
      EXPECT_TRUE(t.at(key).is_boolean()) << key;
    }
    EXPECT_EQ(t.size(), 16u);
  }
  const auto& live = j["targets"][0];
  EXPECT_EQ(live["pid"], 42);
  EXPECT_EQ(live["ppid"], 7);
  EXPECT_EQ(live["command"], "./demo --leak");
  EXPECT_EQ(live["allocator"], "jemalloc");
  EXPECT_EQ(live["problem"], "");
  const auto& stale = j["targets"][1];
  EXPECT_EQ(stale["pid"], 4000);
  EXPECT_EQ(stale["ppid"], 0);
  EXPECT_EQ(stale["allocator"], "unknown");
  EXPECT_EQ(stale["stale"], true);
  EXPECT_EQ(stale["removed"], false);
  EXPECT_EQ(stale["problem"],
            "stale socket: process 4000 no longer exists (`memprofctl list` without "
            "--no-prune removes it)");
}

TEST_F(ListCommandTest, UnreachableAgentBecomesAProblemNotAnError) {
  // A socket something listens on (so it is not stale) whose agent fails.
  Fd listener = testing::ListenOn(sockets_ + "/43.sock");
  AddProc(43, "busy");
  client_.status_for = [](const Target& t) -> Result<memprof::v1::StatusResponse> {
    if (t.pid == 43) return Fail(ErrorCode::kUnavailable, "agent of 43 is not answering");
    return Status(true, true);
  };
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  const std::string text = out_.str();
  EXPECT_NE(text.find("PID"), std::string::npos);
  EXPECT_NE(text.find("problem: pid 43: agent of 43 is not answering\n"), std::string::npos)
      << text;
  EXPECT_TRUE(testing::FileExists(sockets_ + "/43.sock"));
}

TEST_F(ListCommandTest, TableHasTheContractColumns) {
  client_.status_result = Status(true, true);
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  const std::string text = out_.str();
  const std::string header = text.substr(0, text.find('\n'));
  size_t at = 0;
  for (const char* column : {"PID", "PPID", "USER", "ALLOCATOR", "PROFILING", "AGENT", "COMMAND"}) {
    const size_t found = header.find(column, at);
    ASSERT_NE(found, std::string::npos) << column << " in " << header;
    at = found + 1;
  }
  EXPECT_NE(text.find("active"), std::string::npos);
}

// As `status` shows it: the user a process runs as is its effective one. A
// service that switched its effective user only (seteuid) shows the real
// one beside it.
TEST_F(ListCommandTest, ShowsTheEffectiveUserAndTheRealOneWhenTheyDiffer) {
  const pid_t pid = 77;
  testing::MakeProcEntry(proc_, pid, "named", {}, 1000, {"/usr/sbin/named", "-u", "bind"});
  testing::WriteFile(proc_ + "/77/status",
                     "Name:\tnamed\nPid:\t77\nPPid:\t1\nUid:\t0\t65534\t65534\t65534\n");
  testing::MakeSocketFile(sockets_ + "/77.sock");
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{.json = true}, discovery_, client_, out_));
  const auto targets = nlohmann::json::parse(out_.str())["targets"];
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[1]["pid"], pid);
  EXPECT_EQ(targets[1]["uid"], 65534);
  EXPECT_EQ(targets[1]["real_uid"], 0);
  EXPECT_EQ(targets[1]["user"], UserName(65534));
  EXPECT_EQ(targets[0]["real_uid"], targets[0]["uid"]);

  std::ostringstream text;
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, text));
  EXPECT_NE(text.str().find(UserName(65534) + " (real root)"), std::string::npos) << text.str();
}

TEST_F(ListCommandTest, AProcessTitleIsShownWithoutItsPadding) {
  testing::MakeProcEntry(proc_, 78, "postgres", {}, 1000,
                         {"postgres: checkpointer                 ", "", ""});
  testing::MakeSocketFile(sockets_ + "/78.sock");
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{.json = true}, discovery_, client_, out_));
  const auto targets = nlohmann::json::parse(out_.str())["targets"];
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[1]["command"], "postgres: checkpointer");
}

TEST_F(ListCommandTest, RemovesTheSocketOfAnExitedProcessAndListsOnlyTheLive) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");  // no /proc/4000: its process is gone
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{.json = true}, discovery_, client_, out_));
  const auto j = nlohmann::json::parse(out_.str());
  ASSERT_EQ(j["targets"].size(), 1u) << out_.str();
  EXPECT_EQ(j["targets"][0]["pid"], 42);
  EXPECT_EQ(j["targets"][0]["removed"], false);
  EXPECT_TRUE(testing::FileExists(sockets_ + "/42.sock"));
  EXPECT_FALSE(testing::FileExists(sockets_ + "/4000.sock"));
  EXPECT_EQ(client_.calls, 1);
}

TEST_F(ListCommandTest, RemovesASocketNobodyListensOnEvenIfThePidIsAlive) {
  // 42's socket is a bound-then-closed socket: connect() is refused, as
  // after its program exec'd one without an agent.
  client_.status_result = Fail(ErrorCode::kUnavailable, "stale socket: nobody is listening");
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_EQ(out_.str(), "no memprof agents found in " + sockets_ + "\n");
  EXPECT_FALSE(testing::FileExists(sockets_ + "/42.sock"));
}

TEST_F(ListCommandTest, VerboseLogNamesEachRemovedSocket) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");
  client_.status_result = Status(true, false);
  ConfigureLogging(err_, 1);
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_NE(err_.str().find("removed stale socket " + sockets_ +
                            "/4000.sock: process 4000 no longer exists"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(out_.str().find("4000"), std::string::npos) << out_.str();
}

TEST_F(ListCommandTest, SilentAboutRemovalsWithoutVerbose) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");
  client_.status_result = Status(true, false);
  ConfigureLogging(err_, 0);
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_EQ(err_.str(), "");
  EXPECT_FALSE(testing::FileExists(sockets_ + "/4000.sock"));
}

TEST_F(ListCommandTest, NoPruneRemovesNothing) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");
  client_.status_result = Fail(ErrorCode::kUnavailable, "stale socket: nobody is listening");
  ASSERT_TRUE(RunList(ListOptions{.prune = false}, discovery_, client_, out_));
  EXPECT_NE(out_.str().find("problem: pid 42: stale socket: nobody listens on it"),
            std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("`memprofctl list` without --no-prune removes it"), std::string::npos)
      << out_.str();
  EXPECT_TRUE(testing::FileExists(sockets_ + "/42.sock"));
  EXPECT_TRUE(testing::FileExists(sockets_ + "/4000.sock"));
}

TEST_F(ListCommandTest, OtherUsersStaleSocketsAreListedNotRemoved) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");  // owned by us (the test's uid)
  client_.status_result = Status(true, false);
  const uid_t someone_else = ::geteuid() + 4242;
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_, someone_else));
  EXPECT_NE(out_.str().find("problem: pid 4000: stale socket: process 4000 no longer exists; "
                            "left alone: it belongs to uid " +
                            std::to_string(::geteuid())),
            std::string::npos)
      << out_.str();
  EXPECT_TRUE(testing::FileExists(sockets_ + "/4000.sock"));
}

TEST_F(ListCommandTest, ProcessThatCannotBeReadIsNotTakenForGone) {
  testing::MakeSocketFile(sockets_ + "/4001.sock");
  testing::MakeDirs(proc_ + "/4001");  // /proc/4001 exists, its status cannot be read
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_NE(out_.str().find("problem: pid 4001: cannot read /proc/4001"), std::string::npos)
      << out_.str();
  EXPECT_TRUE(testing::FileExists(sockets_ + "/4001.sock"));
  EXPECT_EQ(client_.calls, 1);
}

TEST_F(ListCommandTest, ContainerSocketsAreNeverRemoved) {
  testing::MakeProcEntry(proc_, 4321, "app", {7});  // NSpid: 4321 7
  const std::string inner = proc_ + "/4321/root" + sockets_;
  testing::MakeDirs(inner);
  testing::MakeSocketFile(inner + "/7.sock");  // nobody listens
  client_.status_for = [](const Target& t) -> Result<memprof::v1::StatusResponse> {
    if (t.pid == 4321) return Fail(ErrorCode::kUnavailable, "nobody is listening");
    return Status(true, true);
  };
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_NE(out_.str().find("problem: pid 4321: stale socket: nobody listens on it"),
            std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("left alone: it is inside the container's own socket directory"),
            std::string::npos)
      << out_.str();
  EXPECT_TRUE(testing::FileExists(inner + "/7.sock"));
}

// A socket that something listens on, named after a pid whose process
// started `started_after` seconds after the socket was made.
class PidReuseTest : public ListCommandTest {
 protected:
  static constexpr pid_t kReused = 77;
  Fd listener_;

  void SetUpReuse(int64_t started_after) {
    listener_ = testing::ListenOn(sockets_ + "/77.sock");
    AddProc(kReused, "newcomer");
    constexpr int64_t kUptime = 1000;  // the process started 1000 s after boot
    testing::MakeProcBootTime(
        proc_, testing::ChangedSeconds(sockets_ + "/77.sock") - kUptime + started_after);
    MakeProcStat(proc_, kReused, 1, kUptime * ::sysconf(_SC_CLK_TCK));
  }
  void AnswerFor77(Result<memprof::v1::StatusResponse> answer) {
    client_.status_for = [answer](const Target& t) -> Result<memprof::v1::StatusResponse> {
      return t.pid == kReused ? answer : Status(true, true);
    };
  }
};

TEST_F(PidReuseTest, SocketOlderThanItsProcessIsRemoved) {
  SetUpReuse(10);
  AnswerFor77(Fail(ErrorCode::kPermissionDenied, "socket is not served by pid 77"));
  ASSERT_TRUE(RunList(ListOptions{.prune = false}, discovery_, client_, out_));
  EXPECT_NE(out_.str().find("problem: pid 77: stale socket: pid 77 now belongs to a process that "
                            "started after the socket was made"),
            std::string::npos)
      << out_.str();
  out_.str("");
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_EQ(out_.str().find("77"), std::string::npos) << out_.str();
  EXPECT_FALSE(testing::FileExists(sockets_ + "/77.sock"));
}

TEST_F(PidReuseTest, AStartWithinTheClockSlackIsNotReuse) {
  SetUpReuse(1);
  AnswerFor77(Fail(ErrorCode::kUnavailable, "not answering"));
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_NE(out_.str().find("problem: pid 77: not answering"), std::string::npos) << out_.str();
  EXPECT_TRUE(testing::FileExists(sockets_ + "/77.sock"));
}

TEST_F(PidReuseTest, AnAgentThatAnswersKeepsItsSocketWhateverTheClocksSay) {
  // As after the wall clock was stepped forward: the process looks younger
  // than its socket, but its agent answers.
  SetUpReuse(3600);
  AnswerFor77(Status(true, false));
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  EXPECT_EQ(out_.str().find("problem"), std::string::npos) << out_.str();
  EXPECT_TRUE(testing::FileExists(sockets_ + "/77.sock"));
}

TEST_F(ListCommandTest, WorkersAreShownUnderTheirMaster) {
  for (pid_t pid : {100, 101, 102, 103, 50}) AddAgent(pid, "p" + std::to_string(pid));
  MakeProcStat(proc_, 100, 1);
  MakeProcStat(proc_, 101, 100);
  MakeProcStat(proc_, 102, 100);
  MakeProcStat(proc_, 103, 101);
  MakeProcStat(proc_, 50, 1);
  MakeProcStat(proc_, kPid, 9999);  // its parent has no agent: a root
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{}, discovery_, client_, out_));
  const std::string text = out_.str();
  std::vector<std::string> commands;
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // header
  const size_t column = line.find("COMMAND");
  while (std::getline(lines, line)) commands.push_back(line.substr(column));
  EXPECT_EQ(commands, (std::vector<std::string>{"./demo --leak", "./p50 --leak", "./p100 --leak",
                                                "\\_ ./p101 --leak", "  \\_ ./p103 --leak",
                                                "\\_ ./p102 --leak"}))
      << text;
  EXPECT_NE(text.find("\n101   100  "), std::string::npos) << text;
}

TEST(FamilyOrderTest, ParentsCycleIsStillListedOnce) {
  std::vector<ListRow> rows(3);
  rows[0].pid = 5;
  rows[0].ppid = 6;
  rows[1].pid = 6;
  rows[1].ppid = 5;
  rows[2].pid = 7;
  rows[2].ppid = 7;  // its own parent
  const auto order = FamilyOrder(rows);
  std::vector<std::pair<pid_t, int>> got;
  for (const auto& [row, depth] : order) got.emplace_back(row->pid, depth);
  EXPECT_EQ(got, (std::vector<std::pair<pid_t, int>>{{7, 0}, {5, 0}, {6, 1}}));
}

TEST_F(ListCommandTest, NoAgentsIsNotAnError) {
  testing::TempDir empty;
  TargetDiscovery discovery(proc_, empty.path());
  ASSERT_TRUE(RunList(ListOptions{}, discovery, client_, out_));
  EXPECT_EQ(out_.str(), "no memprof agents found in " + empty.path() + "\n");
  std::ostringstream json;
  ASSERT_TRUE(RunList(ListOptions{.json = true}, discovery, client_, json));
  EXPECT_EQ(nlohmann::json::parse(json.str())["targets"], nlohmann::json::array());
}

}  // namespace
}  // namespace memprof::cli
