// Permissions for real: targets and memprofctl run as root and as an
// unprivileged user (created on demand, see test_user.h) sharing one socket
// directory like the default /tmp/memprof (root-owned, 01777). Shows that
// another user is denied (by the socket's mode, and by the agent's
// SO_PEERCRED check when the mode is widened), that root is allowed, and that
// a socket planted by another user is refused before anything is sent.
// Skipped (with the reason) when not running as root; the CI runs as root.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/integration/harness/test_user.h"
#include "tests/support/temp_dir.h"

namespace memprof::integration {
namespace {

using nlohmann::json;

class OtherUserTest : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    auto user = EnsureTestUser();
    if (!user) GTEST_SKIP() << "other-user tests skipped: " << user.error().message;
    user_ = *user;
    // The test directory is 0700: let the user through to the shared one.
    ASSERT_EQ(::chmod(dir().path().c_str(), 0711), 0);
    shared_ = dir().File("shared");
    ASSERT_EQ(::mkdir(shared_.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(shared_.c_str(), 01777), 0);  // like /tmp/memprof (chmod: no umask)
    // Where the user may write a dump.
    user_out_ = dir().File("user-out");
    ASSERT_EQ(::mkdir(user_out_.c_str(), 0700), 0);
    ASSERT_EQ(::chown(user_out_.c_str(), user_.uid, user_.gid), 0);
  }

  // A profiling-ready target (the agent is linked, so no LD_PRELOAD reaches
  // setpriv) in the shared directory, as root or as the test user.
  TargetProcess* StartLinked(bool as_user) {
    TargetOptions options;
    options.argv = as_user ? user_.Wrap({kLinkedTarget}) : std::vector<std::string>{kLinkedTarget};
    options.env = {{"MALLOC_CONF", kProfilingReadyConf}};
    return Keep(options);
  }
  // A root process without an agent.
  TargetProcess* StartRootWithoutAgent() {
    TargetOptions options;
    options.argv = {kGlibcTarget};
    options.expect_agent = false;
    return Keep(options);
  }

  CommandResult CliAsRoot(std::vector<std::string> args) {
    return Cli(std::move(args), {{"MEMPROF_SOCKET_DIR", shared_}});
  }
  CommandResult CliAsUser(std::vector<std::string> args) {
    args.insert(args.begin(), kMemprofctl);
    return RunCommand(user_.Wrap(std::move(args)), {{"MEMPROF_SOCKET_DIR", shared_}});
  }

  // Still running, and root can still use its agent.
  void ExpectServing(const TargetProcess& t) {
    EXPECT_FALSE(const_cast<TargetProcess&>(t).process().HasExited());
    CommandResult r = CliAsRoot({"status", "--pid", std::to_string(t.pid()), "--json"});
    EXPECT_EQ(r.exit_code, 0) << r;
  }
  json RootStatus(const TargetProcess& t) {
    CommandResult r = CliAsRoot({"status", "--pid", std::to_string(t.pid()), "--json"});
    EXPECT_EQ(r.exit_code, 0) << r;
    return ParseJsonOutput(r);
  }

  TestUser user_;
  std::string shared_;
  std::string user_out_;

 private:
  TargetProcess* Keep(TargetOptions options) {
    options.socket_dir = shared_;
    auto target = TargetProcess::Start(options);
    if (!target) {
      ADD_FAILURE() << "cannot start " << JoinArgv(options.argv) << ": " << target.error().message;
      return nullptr;
    }
    targets_.push_back(std::move(*target));
    return targets_.back().get();
  }

  // Destroyed (killed and reaped) before the base class removes the directory.
  std::vector<std::unique_ptr<TargetProcess>> targets_;
};

// (a) The socket is 0600 and owned by root: the user's connect() fails with
// EACCES, and every command says so with exit code 4.
TEST_F(OtherUserTest, UserIsDeniedARootTarget) {
  TargetProcess* t = StartLinked(/*as_user=*/false);
  ASSERT_NE(t, nullptr);
  struct stat st {};
  ASSERT_EQ(::lstat(t->socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const std::string pid = std::to_string(t->pid());
  const std::string kDenied = "permission denied connecting to " + t->socket_path();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", "--pid", pid},
        {"stats", "--pid", pid, "--json"},
        {"activate", "--pid", pid, "--for", "5m"},
        {"deactivate", "--pid", pid},
        {"status"}}) {
    SCOPED_TRACE(JoinArgv(args));
    CommandResult r = CliAsUser(args);
    ExpectCliError(r, 4, kDenied);
    EXPECT_NE(r.err.find(": the socket belongs to root, the user pid " + pid +
                         " runs as, and only that user and root may use it; run memprofctl as "
                         "root"),
              std::string::npos)
        << r;
  }
  CommandResult dump = CliAsUser({"dump", "--pid", pid, "--out", user_out_ + "/p.heap"});
  ExpectCliError(dump, 4, kDenied);
  EXPECT_EQ(DirectoryEntries(user_out_), std::vector<std::string>{}) << "partial or temp file left";

  // The user's list shows the target and why it cannot be used.
  CommandResult list = CliAsUser({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  json targets = ParseJsonOutput(list)["targets"];
  ASSERT_EQ(targets.size(), 1u) << list;
  EXPECT_EQ(targets[0]["pid"], t->pid());
  EXPECT_NE(targets[0]["problem"].get<std::string>().find("permission denied"),
            std::string::npos)
      << list;

  // Nothing reached the agent.
  json status = RootStatus(*t);
  EXPECT_EQ(status["profiling_active"], false);
  EXPECT_EQ(status["dumps_served"], 0);
  ExpectServing(*t);
}

// (b) Root may use any user's agent: the socket belongs to the target's
// user (trusted), root passes the agent's peer check, and everything works.
TEST_F(OtherUserTest, RootIsAllowedAUsersTarget) {
  TargetProcess* t = StartLinked(/*as_user=*/true);
  ASSERT_NE(t, nullptr);
  struct stat st {};
  ASSERT_EQ(::lstat(t->socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid) << "the agent runs as the user";
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  json status = RootStatus(*t);
  EXPECT_EQ(status["uid"], user_.uid);
  EXPECT_EQ(status["profiling_enabled"], true);
  const std::string pid = std::to_string(t->pid());
  CommandResult activate = CliAsRoot({"activate", "--pid", pid, "--for", "5m"});
  EXPECT_EQ(activate.exit_code, 0) << activate;
  CommandResult stats = CliAsRoot({"stats", "--pid", pid, "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats;
  EXPECT_EQ(ParseJsonOutput(stats)["allocator"], "jemalloc");
  const std::string out = dir().File("user-target.heap");
  CommandResult dump = CliAsRoot({"dump", "--pid", pid, "--out", out});
  ASSERT_EQ(dump.exit_code, 0) << dump;
  EXPECT_TRUE(ReadFile(out).starts_with("heap_v2/")) << ReadFile(out).substr(0, 200);
  CommandResult deactivate = CliAsRoot({"deactivate", "--pid", pid});
  EXPECT_EQ(deactivate.exit_code, 0) << deactivate;
  EXPECT_EQ(RootStatus(*t)["dumps_served"], 1);

  // And the user may use their own target too.
  CommandResult own = CliAsUser({"status", "--pid", pid, "--json"});
  EXPECT_EQ(own.exit_code, 0) << own;
  ExpectServing(*t);
}

// (c) In a shared sticky directory another user can create a socket under a
// name of their choosing. A user's agent socket renamed to a root process's
// <pid>.sock is refused by root's memprofctl because of its owner, before it
// connects (and SO_PEERCRED would refuse it next: its peer is not that pid).
TEST_F(OtherUserTest, SocketPlantedByAnotherUserIsRefused) {
  TargetProcess* victim = StartRootWithoutAgent();
  TargetProcess* planter = StartLinked(/*as_user=*/true);
  ASSERT_NE(victim, nullptr);
  ASSERT_NE(planter, nullptr);
  const std::string pid = std::to_string(victim->pid());
  const std::string planted = shared_ + "/" + pid + ".sock";
  CommandResult mv = RunCommand(user_.Wrap({"/bin/mv", planter->socket_path(), planted}), {});
  ASSERT_EQ(mv.exit_code, 0) << mv;

  const std::string kRefused = "socket " + planted + " is owned by uid " +
                               std::to_string(user_.uid) + " but pid " + pid + " runs as uid 0";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", "--pid", pid},
        {"activate", "--pid", pid},
        {"stats", "--pid", pid, "--raw"},
        {"status"},  // the only live agent is the planted one
        {"status", "--name", "glibc_target"}}) {
    SCOPED_TRACE(JoinArgv(args));
    CommandResult r = CliAsRoot(args);
    ExpectCliError(r, 4, kRefused);
    EXPECT_NE(r.err.find("planted"), std::string::npos) << r;
  }
  ExpectCliError(CliAsRoot({"dump", "--pid", pid, "--out", dir().File("p.heap")}), 4, "planted");
  EXPECT_FALSE(FileExists(dir().File("p.heap")));
  EXPECT_EQ(DirectoryEntries(shared_), std::vector<std::string>{pid + ".sock"});

  CommandResult list = CliAsRoot({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list;
  json targets = ParseJsonOutput(list)["targets"];
  ASSERT_EQ(targets.size(), 1u) << list;
  EXPECT_EQ(targets[0]["pid"], victim->pid());
  EXPECT_NE(targets[0]["problem"].get<std::string>().find("planted"), std::string::npos) << list;

  EXPECT_FALSE(victim->process().HasExited());
  EXPECT_FALSE(planter->process().HasExited());
}

// (d) The agent's own check (SO_PEERCRED): with the socket's mode widened to
// 0666, another user can connect, and the agent answers PERMISSION_DENIED
// before running anything.
TEST_F(OtherUserTest, AgentRefusesAnotherUserEvenThroughAnOpenSocket) {
  TargetProcess* t = StartLinked(/*as_user=*/false);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(::chmod(t->socket_path().c_str(), 0666), 0);
  const std::string pid = std::to_string(t->pid());
  const std::string kRefused = "may not use this memprof agent";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", "--pid", pid},
        {"activate", "--pid", pid, "--for", "1h"},
        {"deactivate", "--pid", pid},
        {"stats", "--pid", pid, "--json"}}) {
    SCOPED_TRACE(JoinArgv(args));
    ExpectCliError(CliAsUser(args), 4, kRefused);
  }
  ExpectCliError(CliAsUser({"dump", "--pid", pid, "--out", user_out_ + "/p.heap"}), 4, kRefused);
  EXPECT_EQ(DirectoryEntries(user_out_), std::vector<std::string>{}) << "partial or temp file left";

  json status = RootStatus(*t);
  EXPECT_EQ(status["profiling_active"], false);
  EXPECT_EQ(status["dumps_served"], 0);
  ExpectServing(*t);
}

// --out in a directory the user cannot write: exit 4, checked before the
// agent is asked for anything.
TEST_F(OtherUserTest, OutInADirectoryTheUserCannotWrite) {
  TargetProcess* t = StartLinked(/*as_user=*/true);
  ASSERT_NE(t, nullptr);
  const std::string root_only = dir().File("root-only");
  ASSERT_EQ(::mkdir(root_only.c_str(), 0755), 0);
  const std::string pid = std::to_string(t->pid());
  CommandResult r = CliAsUser({"dump", "--pid", pid, "--out", root_only + "/p.heap"});
  ExpectCliError(r, 4, "cannot create a file in directory '" + root_only + "'");
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r;
  EXPECT_EQ(DirectoryEntries(root_only), std::vector<std::string>{});
  EXPECT_EQ(RootStatus(*t)["dumps_served"], 0);
  ExpectServing(*t);
}

// A user may not read a root process's /proc/<pid>/maps or environ:
// memprofctl says what it could not check instead of claiming "no agent".
TEST_F(OtherUserTest, WhatTheUserMayNotReadIsSaidNotGuessed) {
  TargetProcess* t = StartRootWithoutAgent();
  ASSERT_NE(t, nullptr);
  const std::string pid = std::to_string(t->pid());
  CommandResult r = CliAsUser({"status", "--pid", pid});
  ExpectCliError(r, 3,
                 "process " + pid + " (glibc_target) has no socket at " + shared_ + "/" + pid +
                     ".sock, and memprofctl cannot tell whether it loaded the memprof agent: it "
                     "may not read /proc/" +
                     pid + "/maps");
  EXPECT_NE(r.err.find("run memprofctl as root to find out"), std::string::npos) << r;
  // Root may read them, and knows.
  ExpectCliError(CliAsRoot({"status", "--pid", pid}), 3,
                 "no libmemprof_agent.so in its memory map");
}

// A socket directory the user may not enter: exit 4, naming the directory
// and its owner, not "no agent".
TEST_F(OtherUserTest, ASocketDirectoryTheUserMayNotEnter) {
  const std::string private_dir = dir().File("private");
  ASSERT_EQ(::mkdir(private_dir.c_str(), 0700), 0);
  TargetOptions options;
  options.argv = {kLinkedTarget};
  options.env = {{"MALLOC_CONF", kProfilingReadyConf}};
  options.socket_dir = private_dir;
  auto target = TargetProcess::Start(options);
  ASSERT_TRUE(target) << target.error().message;
  const std::string pid = std::to_string((*target)->pid());
  std::vector<std::string> args = {kMemprofctl, "status", "--pid", pid};
  CommandResult r = RunCommand(user_.Wrap(args), {{"MEMPROF_SOCKET_DIR", private_dir}});
  ExpectCliError(r, 4,
                 "permission denied looking for " + private_dir + "/" + pid +
                     ".sock: memprofctl runs as uid " + std::to_string(user_.uid) + " (" +
                     user_.name + "), which may not enter " + private_dir +
                     " (owned by root, mode 0700); run memprofctl as root");
}

}  // namespace
}  // namespace memprof::integration
