#include "cli/commands/list_command.h"

#include <sstream>
#include <utility>
#include <vector>

#include "command_test_fixture.h"

namespace memprof::cli {
namespace {

using testing::MakeProcStat;

class ListCommandTest : public testing::CommandTest {};

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
  EXPECT_EQ(BuildListRow(entry, client_).profiling, "active");
  client_.status_result = Status(true, false);
  EXPECT_EQ(BuildListRow(entry, client_).profiling, "inactive");
  client_.status_result = Status(false, false);
  EXPECT_EQ(BuildListRow(entry, client_).profiling, "off");
  auto unsupported = Status(false, false);
  unsupported.set_profiling_supported(false);
  client_.status_result = unsupported;
  EXPECT_EQ(BuildListRow(entry, client_).profiling, "unsupported");
  memprof::v1::StatusResponse glibc;
  glibc.set_allocator(memprof::v1::ALLOCATOR_KIND_GLIBC);
  client_.status_result = glibc;
  EXPECT_EQ(BuildListRow(entry, client_).profiling, "n/a");
}

TEST_F(ListCommandTest, JsonListsLiveAndStaleTargetsWithStableTypes) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");  // stale
  testing::MakeProcStat(proc_, kPid, 7);
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{true}, discovery_, client_, out_));
  EXPECT_EQ(client_.calls, 1);  // the stale socket is not contacted
  const auto j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["socket_dir"], sockets_);
  ASSERT_EQ(j["targets"].size(), 2u);
  for (const auto& t : j["targets"]) {
    for (const char* key : {"pid", "ppid", "uid"}) {
      EXPECT_TRUE(t.at(key).is_number_integer()) << key;
    }
    for (const char* key : {"user", "command", "allocator", "agent_version", "socket", "problem"}) {
      EXPECT_TRUE(t.at(key).is_string()) << key;
    }
    EXPECT_TRUE(t.at("profiling_enabled").is_boolean());
    EXPECT_TRUE(t.at("profiling_active").is_boolean());
    for (const char* key : {"in_container", "stale", "removed"}) {
      EXPECT_TRUE(t.at(key).is_boolean()) << key;
    }
    EXPECT_EQ(t.size(), 14u);
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
  EXPECT_NE(stale["problem"].get<std::string>().find("stale socket"), std::string::npos);
}

TEST_F(ListCommandTest, UnreachableAgentBecomesAProblemNotAnError) {
  client_.status_result = Fail(ErrorCode::kUnavailable, "stale socket x: nobody is listening");
  ASSERT_TRUE(RunList(ListOptions{false}, discovery_, client_, out_));
  const std::string text = out_.str();
  EXPECT_NE(text.find("PID"), std::string::npos);
  EXPECT_NE(text.find("problem: pid 42: stale socket x: nobody is listening"), std::string::npos)
      << text;
}

TEST_F(ListCommandTest, TableHasTheContractColumns) {
  client_.status_result = Status(true, true);
  ASSERT_TRUE(RunList(ListOptions{false}, discovery_, client_, out_));
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

TEST_F(ListCommandTest, PruneRemovesSocketsOfExitedProcessesAndNobodyElse) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");  // its process is gone
  client_.status_result = Status(true, false);
  ASSERT_TRUE(RunList(ListOptions{true, true}, discovery_, client_, out_));
  const auto j = nlohmann::json::parse(out_.str());
  ASSERT_EQ(j["targets"].size(), 2u);
  EXPECT_FALSE(j["targets"][0]["removed"]);
  EXPECT_TRUE(j["targets"][1]["stale"]);
  EXPECT_TRUE(j["targets"][1]["removed"]);
  EXPECT_EQ(j["targets"][1]["problem"], "stale socket removed");
  EXPECT_TRUE(testing::FileExists(sockets_ + "/42.sock"));
  EXPECT_FALSE(testing::FileExists(sockets_ + "/4000.sock"));
}

TEST_F(ListCommandTest, PruneRemovesASocketNobodyListensOnEvenIfThePidIsAlive) {
  // 42's socket is a bound-then-closed socket: connect() is refused, as for
  // an agent killed with SIGKILL whose pid was reused.
  client_.status_result = Fail(ErrorCode::kUnavailable, "stale socket: nobody is listening");
  ASSERT_TRUE(RunList(ListOptions{false, true}, discovery_, client_, out_));
  EXPECT_NE(out_.str().find("problem: pid 42: stale socket removed"), std::string::npos)
      << out_.str();
  EXPECT_FALSE(testing::FileExists(sockets_ + "/42.sock"));
}

TEST_F(ListCommandTest, WithoutPruneNothingIsRemoved) {
  testing::MakeSocketFile(sockets_ + "/4000.sock");
  client_.status_result = Fail(ErrorCode::kUnavailable, "stale socket: nobody is listening");
  ASSERT_TRUE(RunList(ListOptions{false, false}, discovery_, client_, out_));
  EXPECT_NE(out_.str().find("`memprofctl list --prune` removes it"), std::string::npos)
      << out_.str();
  EXPECT_TRUE(testing::FileExists(sockets_ + "/42.sock"));
  EXPECT_TRUE(testing::FileExists(sockets_ + "/4000.sock"));
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
  ASSERT_TRUE(RunList(ListOptions{false}, discovery_, client_, out_));
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
  ASSERT_TRUE(RunList(ListOptions{false}, discovery, client_, out_));
  EXPECT_EQ(out_.str(), "no memprof agents found in " + empty.path() + "\n");
  std::ostringstream json;
  ASSERT_TRUE(RunList(ListOptions{true}, discovery, client_, json));
  EXPECT_EQ(nlohmann::json::parse(json.str())["targets"], nlohmann::json::array());
}

}  // namespace
}  // namespace memprof::cli
