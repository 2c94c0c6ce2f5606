// memprofctl list against real processes: it removes the sockets that are
// provably stale, leaves a live agent's socket alone, and shows each
// process's parent so that a master and its workers read as a family.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using nlohmann::json;
using std::chrono::seconds;

std::optional<ino_t> Inode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_ino;
}

std::vector<pid_t> Pids(const json& list) {  // in output order
  std::vector<pid_t> pids;
  for (const json& t : list["targets"]) pids.push_back(t["pid"].get<pid_t>());
  return pids;
}

// The lines of a `list` table, each split into its words.
std::vector<std::vector<std::string>> TableRows(const std::string& table) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    rows.emplace_back(std::istream_iterator<std::string>(words),
                      std::istream_iterator<std::string>());
  }
  return rows;
}

// The index of the table row whose PID is `pid`, or -1.
int RowOf(const std::vector<std::vector<std::string>>& rows, pid_t pid) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].empty() && rows[i][0] == std::to_string(pid)) return static_cast<int>(i);
  }
  return -1;
}

class ListTest : public IntegrationTest {
 protected:
  // A live agent, the socket left by a SIGKILLed one, and a live process
  // whose socket refuses connections (as after an exec or an _exit).
  struct Scene {
    TargetProcess* live = nullptr;
    pid_t killed_pid = 0;
    std::string killed_socket;
    TargetProcess* execed = nullptr;
  };

  TargetProcess* StartPreloaded() { return StartShape(Shape::kPreloaded); }

  std::optional<Scene> StartScene() {
    Scene scene{StartPreloaded(), 0, "", nullptr};
    TargetProcess* killed = StartPreloaded();
    scene.execed = StartWithoutAgent();
    if (scene.live == nullptr || killed == nullptr || scene.execed == nullptr) return std::nullopt;
    scene.killed_pid = killed->pid();
    scene.killed_socket = killed->socket_path();
    killed->process().KillAndReap();  // SIGKILL: its socket stays
    EXPECT_TRUE(FileExists(scene.killed_socket));
    EXPECT_NO_THROW(MakeSocketFile(scene.execed->socket_path()));
    return scene;
  }
};

TEST_F(ListTest, NoPruneShowsStaleSocketsAndRemovesNothing) {
  const std::optional<Scene> scene = StartScene();
  ASSERT_TRUE(scene.has_value());
  CommandResult look = Cli({"list", "--json", "--no-prune"});
  ASSERT_EQ(look.exit_code, 0) << look;
  const json all = ParseJsonOutput(look);
  ASSERT_EQ(all["targets"].size(), 3u) << look;
  for (const json& t : all["targets"]) {
    EXPECT_EQ(t["stale"], t["pid"] != scene->live->pid()) << t.dump(2);
  }
  EXPECT_EQ(dir().List().size(), 3u);
}

TEST_F(ListTest, RemovesStaleSocketsAndLeavesTheLiveAgentAlone) {
  const std::optional<Scene> scene = StartScene();
  ASSERT_TRUE(scene.has_value());
  TargetProcess& live = *scene->live;
  const std::optional<ino_t> live_inode = Inode(live.socket_path());
  CommandResult list = Cli({"-v", "list"});
  ASSERT_EQ(list.exit_code, 0) << list;
  const auto rows = TableRows(list.out);
  ASSERT_EQ(rows.size(), 2u) << "a header and the live agent\n" << list;
  EXPECT_EQ(RowOf(rows, live.pid()), 1) << list;
  EXPECT_NE(list.err.find("removed stale socket " + scene->killed_socket + ": process " +
                          std::to_string(scene->killed_pid) + " no longer exists"),
            std::string::npos)
      << list;
  EXPECT_NE(list.err.find("removed stale socket " + scene->execed->socket_path() +
                          ": nobody listens"),
            std::string::npos)
      << list;
  EXPECT_EQ(dir().List(), std::vector<std::string>{std::to_string(live.pid()) + ".sock"});
  EXPECT_EQ(Inode(live.socket_path()), live_inode) << "the live socket was replaced";
  EXPECT_TRUE(SocketAccepts(live.socket_path()));
  EXPECT_FALSE(scene->execed->process().HasExited());
  CommandResult again = Cli({"list", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again;
  EXPECT_EQ(again.err, "") << again;
  EXPECT_EQ(Pids(ParseJsonOutput(again)), std::vector<pid_t>{live.pid()}) << again;
  EXPECT_EQ(CliFor(live, "status").exit_code, 0);
}

// Not only `list`: every command that looks for agents removes the sockets
// of processes killed by a signal, whichever target it is about.
// A live process's socket that nobody listens on is proven stale only by
// asking each agent, which `list` alone does: the others leave it.
TEST_F(ListTest, EveryCommandRemovesTheSocketsOfKilledProcesses) {
  const std::optional<Scene> scene = StartScene();
  ASSERT_TRUE(scene.has_value());
  TargetProcess& live = *scene->live;
  const std::optional<ino_t> live_inode = Inode(live.socket_path());
  CommandResult status = Cli({"-v", "status", "--pid", std::to_string(live.pid())});
  ASSERT_EQ(status.exit_code, 0) << status;
  EXPECT_FALSE(FileExists(scene->killed_socket)) << status;
  EXPECT_NE(status.err.find("removed stale socket " + scene->killed_socket + ": process " +
                            std::to_string(scene->killed_pid) + " no longer exists"),
            std::string::npos)
      << status;
  EXPECT_TRUE(FileExists(scene->execed->socket_path())) << status;
  EXPECT_EQ(Inode(live.socket_path()), live_inode) << "the live socket was replaced";

  // Without -v the removal is silent, and a command that fails still prunes.
  TargetProcess* killed = StartPreloaded();
  ASSERT_NE(killed, nullptr);
  const std::string killed_socket = killed->socket_path();
  killed->process().KillAndReap();
  ASSERT_TRUE(FileExists(killed_socket));
  CommandResult stats = Cli({"stats", "--pid", std::to_string(scene->execed->pid())});
  EXPECT_NE(stats.exit_code, 0) << stats;
  EXPECT_EQ(stats.err.find("removed stale socket"), std::string::npos) << stats;
  EXPECT_FALSE(FileExists(killed_socket)) << stats;
  EXPECT_TRUE(SocketAccepts(live.socket_path()));
}

TEST_F(ListTest, JsonStaysQuietAboutRemovalsAndKeepsItsShape) {
  TargetProcess* live = StartPreloaded();
  TargetProcess* killed = StartPreloaded();
  ASSERT_TRUE(live != nullptr && killed != nullptr);
  killed->process().KillAndReap();
  CommandResult list = Cli({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  EXPECT_EQ(list.err, "") << "removals are reported with -v only\n" << list;
  json j = ParseJsonOutput(list);
  ASSERT_EQ(j["targets"].size(), 1u) << list;
  const json& t = j["targets"][0];
  EXPECT_EQ(t["pid"], live->pid());
  ASSERT_TRUE(t["ppid"].is_number_integer()) << t.dump(2);
  EXPECT_EQ(t["ppid"], ::getpid()) << "the test started it";
  EXPECT_EQ(t["stale"], false);
  EXPECT_EQ(t["removed"], false);
  EXPECT_EQ(t["uid"], ::geteuid()) << "the effective user, as status shows it";
  EXPECT_EQ(t["real_uid"], ::getuid());
  EXPECT_EQ(t["sampler"], "jemalloc");
  EXPECT_EQ(t.size(), 16u) << t.dump(2);
}

TEST_F(ListTest, AWorkerIsShownUnderItsMaster) {
  TargetOptions options;
  options.argv = {kForkingTarget, "--worker-agent"};
  options.env = {{"MALLOC_CONF", kProfilingReadyConf}};
  TargetProcess* master = Start(options);
  ASSERT_NE(master, nullptr);
  static const std::regex announced(R"(worker (\d+) agent 0)");
  ASSERT_TRUE(WaitUntil(
      [&] { return std::regex_search(master->process().StdoutText(), announced); }, seconds(60)))
      << master->process().StdoutText() << master->process().StderrText();
  const std::string announcement = master->process().StdoutText();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(announcement, m, announced));
  const pid_t worker = std::stoi(m[1]);
  const std::string worker_socket = SocketDir() + "/" + std::to_string(worker) + ".sock";
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(worker_socket); }, seconds(30)));

  CommandResult list = Cli({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  const json j = ParseJsonOutput(list);
  ASSERT_EQ(j["targets"].size(), 2u) << list;
  for (const json& t : j["targets"]) {
    EXPECT_EQ(t["ppid"], t["pid"] == worker ? master->pid() : ::getpid()) << t.dump(2);
  }
  CommandResult table = Cli({"list"});
  ASSERT_EQ(table.exit_code, 0) << table;
  const auto rows = TableRows(table.out);
  const int master_row = RowOf(rows, master->pid());
  ASSERT_GT(master_row, 0) << table;
  ASSERT_EQ(RowOf(rows, worker), master_row + 1) << "the worker right under its master\n"
                                                 << table;
  const std::vector<std::string>& worker_words = rows[master_row + 1];
  EXPECT_EQ(worker_words[1], std::to_string(master->pid())) << "its PPID\n" << table;
  EXPECT_NE(std::find(worker_words.begin(), worker_words.end(), "\\_"), worker_words.end())
      << table;
}

}  // namespace
}  // namespace memprof::integration
