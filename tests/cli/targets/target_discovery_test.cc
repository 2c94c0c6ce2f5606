#include "cli/targets/target_discovery.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

using testing::MakeDirs;
using testing::MakeProcEntry;
using testing::MakeSocketFile;
using testing::TempDir;
using testing::WriteFile;

class TargetDiscoveryTest : public ::testing::Test {
 protected:
  TempDir tmp_;
  std::string proc_ = tmp_.File("proc");
  std::string sockets_ = tmp_.File("s");
  TargetDiscovery discovery_{proc_, sockets_};

  void SetUp() override {
    MakeDirs(proc_);
    MakeDirs(sockets_);
  }
  void AddAgent(pid_t pid, const std::string& name) {
    MakeProcEntry(proc_, pid, name, {}, 1000, {"/usr/bin/" + name, "--flag"});
    MakeSocketFile(sockets_ + "/" + std::to_string(pid) + ".sock");
  }
};

TEST_F(TargetDiscoveryTest, ResolvesAPidWithASocket) {
  AddAgent(1234, "redis-server");
  auto target = discovery_.Resolve(1234);
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->pid, 1234);
  EXPECT_EQ(target->socket_path, sockets_ + "/1234.sock");
  EXPECT_EQ(target->command, "redis-server");
}

TEST_F(TargetDiscoveryTest, MissingProcessIsNotFound) {
  auto target = discovery_.Resolve(999);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(target.error().message, "no process with pid 999");
}

TEST_F(TargetDiscoveryTest, ProcessWithoutSocketExplainsHowToGetAnAgent) {
  MakeProcEntry(proc_, 55, "nginx");
  WriteFile(proc_ + "/55/maps", "55d0-55e0 r-xp 00000000 fd:01 42   /usr/sbin/nginx\n");
  auto target = discovery_.Resolve(55);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kNotFound);
  const std::string& msg = target.error().message;
  EXPECT_NE(msg.find("process 55 (nginx) has no memprof agent (no socket at " + sockets_ +
                     "/55.sock, and no libmemprof_agent.so in its memory map)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("memprofctl run"), std::string::npos);
  EXPECT_NE(msg.find("LD_PRELOAD=libmemprof_agent.so"), std::string::npos);
  EXPECT_NE(msg.find("memprof_agent_start()"), std::string::npos);
  EXPECT_NE(msg.find("a running process gets one with `memprofctl attach --pid 55`"),
            std::string::npos)
      << msg;
}

// A process whose agent is loaded but does not serve where memprofctl looks:
// what /proc says replaces the generic hint (cli/client/unreachable_agent.h).
TEST_F(TargetDiscoveryTest, ALoadedAgentWithoutASocketIsDiagnosed) {
  MakeProcEntry(proc_, 57, "named");
  WriteFile(proc_ + "/57/maps",
            "7f00-7f10 r-xp 00000000 fd:01 42   /usr/lib/x86_64-linux-gnu/libmemprof_agent.so\n");
  std::string environ = "LD_PRELOAD=libmemprof_agent.so";
  environ += '\0';
  environ += "MEMPROF_AGENT=off";
  environ += '\0';
  WriteFile(proc_ + "/57/environ", environ);
  auto target = discovery_.Resolve(57);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(target.error().message,
            "process 57 (named): memprof agent loaded but not serving: MEMPROF_AGENT=off in its "
            "environment switches it off; restart the process without it");
}

TEST_F(TargetDiscoveryTest, RegularFileAtTheSocketPathIsNamed) {
  MakeProcEntry(proc_, 56, "nginx");
  WriteFile(sockets_ + "/56.sock", "not a socket");
  auto target = discovery_.Resolve(56);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kNotFound);
  EXPECT_NE(target.error().message.find("process 56 (nginx) has no memprof agent: " + sockets_ +
                                        "/56.sock is a regular file, not a socket"),
            std::string::npos)
      << target.error().message;
}

TEST_F(TargetDiscoveryTest, FallsBackToTheContainerRootWithTheNamespacePid) {
  MakeProcEntry(proc_, 4321, "app", {7});  // NSpid: 4321 7
  const std::string inner = proc_ + "/4321/root" + sockets_;
  MakeDirs(inner);
  MakeSocketFile(inner + "/7.sock");
  auto target = discovery_.Resolve(4321);
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->pid, 4321);
  EXPECT_EQ(target->socket_path, inner + "/7.sock");
}

TEST_F(TargetDiscoveryTest, RegularFileNamedLikeASocketIsNotAnAgent) {
  MakeProcEntry(proc_, 66, "x");
  WriteFile(sockets_ + "/66.sock", "");
  EXPECT_FALSE(discovery_.Resolve(66));
  auto entries = discovery_.Scan();
  ASSERT_TRUE(entries);
  EXPECT_TRUE(entries->empty());
}

TEST_F(TargetDiscoveryTest, ScanListsSocketsSortedAndMarksStaleOnes) {
  AddAgent(300, "b");
  AddAgent(20, "a");
  MakeSocketFile(sockets_ + "/4000.sock");  // no /proc entry: the process is gone
  MakeSocketFile(sockets_ + "/junk.sock");
  MakeSocketFile(sockets_ + "/020.sock");
  auto entries = discovery_.Scan();
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].target.pid, 20);
  EXPECT_TRUE((*entries)[0].process_exists);
  EXPECT_EQ((*entries)[0].target.command, "a");
  EXPECT_EQ((*entries)[0].cmdline, (std::vector<std::string>{"/usr/bin/a", "--flag"}));
  EXPECT_EQ((*entries)[0].uid, 1000u);
  EXPECT_EQ((*entries)[1].target.pid, 300);
  EXPECT_EQ((*entries)[2].target.pid, 4000);
  EXPECT_FALSE((*entries)[2].process_exists);
}

TEST_F(TargetDiscoveryTest, ScanReadsParentStartTimeAndSocketIdentity) {
  AddAgent(300, "worker");
  testing::MakeProcStat(proc_, 300, 299, 250 * ::sysconf(_SC_CLK_TCK));
  testing::MakeProcBootTime(proc_, 1700000000);
  AddAgent(20, "nostat");  // no stat file: nothing known
  auto entries = discovery_.Scan();
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 2u);
  const SocketEntry& none = (*entries)[0];
  EXPECT_EQ(none.ppid, 0);
  EXPECT_FALSE(none.process_started.has_value());
  const SocketEntry& worker = (*entries)[1];
  EXPECT_EQ(worker.ppid, 299);
  ASSERT_TRUE(worker.process_started.has_value());
  EXPECT_EQ(*worker.process_started,
            std::chrono::system_clock::time_point(std::chrono::seconds(1700000250)));
  struct stat st {};
  ASSERT_EQ(::lstat((sockets_ + "/300.sock").c_str(), &st), 0);
  EXPECT_EQ(worker.socket_file.dev, st.st_dev);
  EXPECT_EQ(worker.socket_file.ino, st.st_ino);
  EXPECT_EQ(worker.socket_file.owner, st.st_uid);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(worker.socket_file.changed),
            std::max(st.st_mtim.tv_sec, st.st_ctim.tv_sec));
}

TEST_F(TargetDiscoveryTest, OnlyAMissingProcDirectoryMeansGone) {
  MakeDirs(proc_ + "/55");
  EXPECT_FALSE(discovery_.ProcessGone(55));
  EXPECT_TRUE(discovery_.ProcessGone(56));
}

TEST_F(TargetDiscoveryTest, MissingSocketDirectoryHoldsNoAgents) {
  TargetDiscovery discovery(proc_, tmp_.File("does-not-exist"));
  auto entries = discovery.Scan();
  ASSERT_TRUE(entries);
  EXPECT_TRUE(entries->empty());
}

TEST_F(TargetDiscoveryTest, WithoutPidTheOnlyLiveAgentIsChosen) {
  AddAgent(42, "demo");
  MakeSocketFile(sockets_ + "/4000.sock");  // stale: ignored
  auto target = discovery_.Resolve(0);
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->pid, 42);
}

TEST_F(TargetDiscoveryTest, WithoutPidAndNoAgentsIsNotFoundNamingTheDirectory) {
  auto target = discovery_.Resolve(0);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(target.error().message.rfind("no memprof agents found in " + sockets_, 0), 0u)
      << target.error().message;
}

TEST_F(TargetDiscoveryTest, WithoutPidAndSeveralAgentsListsTheCandidates) {
  AddAgent(42, "demo");
  AddAgent(43, "redis-server");
  auto target = discovery_.Resolve(0);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(target.error().message.find("--pid, or use --all for every one: 42 (demo), 43 (redis-server)"), std::string::npos)
      << target.error().message;
}

TEST_F(TargetDiscoveryTest, ScanFindsAgentsInsideContainersByTheirHostPid) {
  AddAgent(20, "host-app");
  MakeProcEntry(proc_, 4321, "app", {7});  // NSpid: 4321 7 (a nested pid namespace)
  const std::string inner = proc_ + "/4321/root" + sockets_;
  MakeDirs(inner);
  MakeSocketFile(inner + "/7.sock");
  auto entries = discovery_.Scan();
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[1].target.pid, 4321);
  EXPECT_EQ((*entries)[1].target.socket_path, inner + "/7.sock");
  EXPECT_TRUE((*entries)[1].in_container);
  EXPECT_FALSE((*entries)[0].in_container);
}

TEST_F(TargetDiscoveryTest, NameSelectsTheOnlyMatchingAgent) {
  AddAgent(42, "demo");
  AddAgent(43, "redis-server");
  auto target = discovery_.Resolve(TargetSelector{0, "^redis"});
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->pid, 43);
  // The command line is searched too: "--flag" is in both.
  auto both = discovery_.Resolve(TargetSelector{0, "--flag"});
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(both.error().message.find("2 processes with a memprof agent match --name '--flag'; "
                                      "choose one with --pid, or add --all for every one: 42 (demo), 43 (redis-server)"),
            std::string::npos)
      << both.error().message;
}

TEST_F(TargetDiscoveryTest, NameMatchingNothingIsNotFound) {
  AddAgent(42, "demo");
  auto target = discovery_.Resolve(TargetSelector{0, "nginx"});
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kNotFound);
  EXPECT_NE(target.error().message.find("no process with a memprof agent matches --name 'nginx'"),
            std::string::npos)
      << target.error().message;
}

TEST_F(TargetDiscoveryTest, InvalidNameRegexIsAUsageError) {
  auto target = discovery_.Resolve(TargetSelector{0, "redis("});
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(target.error().message.find("--name 'redis(' is not a valid regular expression"),
            std::string::npos)
      << target.error().message;
}

TEST(UntrustedSocketReasonTest, OnlyTheProcessUserAndRootMayOwnItsSocket) {
  EXPECT_EQ(UntrustedSocketReason("/s/1.sock", 1000, 1, 1000), "");
  EXPECT_EQ(UntrustedSocketReason("/s/1.sock", 0, 1, 1000), "");  // made as root, then setuid
  EXPECT_EQ(UntrustedSocketReason("/s/1.sock", 1001, 1, 1000),
            "socket /s/1.sock is owned by uid 1001 but pid 1 runs as uid 1000: it was not made "
            "by that process's agent (planted by someone else?); refusing it");
  EXPECT_NE(UntrustedSocketReason("/s/1.sock", 1000, 1, 0), "");
}

TEST_F(TargetDiscoveryTest, APlantedSocketIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the socket another owner";
  MakeProcEntry(proc_, 77, "victim", {}, 1000);
  const std::string path = sockets_ + "/77.sock";
  MakeSocketFile(path);
  ASSERT_EQ(::lchown(path.c_str(), 2000, 2000), 0);
  auto target = discovery_.Resolve(77);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(target.error().message.find("owned by uid 2000 but pid 77 runs as uid 1000"),
            std::string::npos)
      << target.error().message;
  auto only = discovery_.Resolve(0);
  ASSERT_FALSE(only);
  EXPECT_EQ(only.error().code, ErrorCode::kPermissionDenied);
}

}  // namespace
}  // namespace memprof::cli
