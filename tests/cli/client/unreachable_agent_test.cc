#include "cli/client/unreachable_agent.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "common/text_file.h"
#include "tests/cli/testing/cli_test_util.h"

namespace memprof::cli {
namespace {

using testing::MakeDirs;
using testing::MakeSocketFile;
using testing::TempDir;
using testing::WriteFile;

// Recorded /proc files (tests/data/proc/agent/README.md says how).
std::string ProcFixture(const std::string& name) {
  auto text = ReadTextFile(std::string(MEMPROF_TEST_DATA_DIR) + "/proc/agent/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : std::string();
}

// Uids no passwd file names, so that messages say "uid 54321".
constexpr uid_t kTargetUid = 54321;
constexpr uid_t kOtherUid = 54322;

PathFacts DirFacts(const std::string& path, uid_t owner, mode_t mode) {
  PathFacts d;
  d.path = path;
  d.st.st_mode = S_IFDIR | mode;
  d.st.st_uid = owner;
  d.st.st_gid = owner;
  return d;
}

PathFacts MissingPath(const std::string& path, int error = ENOENT) {
  PathFacts d;
  d.path = path;
  d.error = error;
  return d;
}

ProcessCredentials RunningAs(uid_t uid) {
  ProcessCredentials c;
  c.real_uid = c.effective_uid = uid;
  c.effective_gid = uid;
  return c;
}

// `e` has `code` and `message`.
void ExpectError(const Error& e, ErrorCode code, const std::string& message) {
  EXPECT_EQ(e.code, code) << e.message;
  EXPECT_EQ(e.message, message);
}

// `e` has `code`, and its message holds `fragment`.
void ExpectSays(const Error& e, ErrorCode code, const std::string& fragment) {
  EXPECT_EQ(e.code, code) << e.message;
  EXPECT_NE(e.message.find(fragment), std::string::npos) << e.message;
}

// A preloaded agent's process, running as kTargetUid, with nothing set but
// LD_PRELOAD; memprofctl (root) looks in /tmp/memprof and finds no socket.
MissingSocket PreloadedWithoutSocket() {
  MissingSocket m;
  m.facts.pid = 3101;
  m.facts.name = "plain_target";
  m.facts.credentials = RunningAs(kTargetUid);
  m.facts.mapping = ParseAgentMapping(ProcFixture("maps_preloaded"));
  m.facts.environment = std::map<std::string, std::string>{
      {"LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libmemprof_agent.so"}};
  m.socket_dir = "/tmp/memprof";
  m.socket_path = "/tmp/memprof/3101.sock";
  m.socket = MissingPath(m.socket_path);
  m.looked_in = DirFacts("/tmp/memprof", 0, 01777);
  m.agent_dir = "/tmp/memprof";
  m.agent_dir_facts = m.looked_in;
  return m;
}

// The same, started with MEMPROF_SOCKET_DIR=/run/memprof-other (a recorded
// environment), a directory of `owner` with `mode`.
MissingSocket InOtherDirectory(uid_t owner, mode_t mode) {
  MissingSocket m = PreloadedWithoutSocket();
  m.facts.environment = ParseAgentEnvironment(ProcFixture("environ_other_dir"));
  m.agent_dir = "/run/memprof-other";
  m.agent_dir_facts = DirFacts(m.agent_dir, owner, mode);
  return m;
}

TEST(AgentFactsTest, FindsTheAgentInARecordedMemoryMap) {
  const AgentMapping idle = ParseAgentMapping(ProcFixture("maps_preloaded"));
  EXPECT_TRUE(idle.core_path.ends_with("/libmemprof_agent.so.0.1.0")) << idle.core_path;
  EXPECT_FALSE(idle.core_deleted);
  EXPECT_EQ(idle.server_path, "") << "no client has connected yet";
  const AgentMapping serving = ParseAgentMapping(ProcFixture("maps_serving"));
  EXPECT_TRUE(serving.server_path.ends_with("/libmemprof_agent_server.so")) << serving.server_path;
  const AgentMapping none = ParseAgentMapping(ProcFixture("maps_without_agent"));
  EXPECT_EQ(none.core_path, "");
  EXPECT_EQ(none.server_path, "");
}

// After `attach` through memfds the two are memfds, always "(deleted)":
// found, and not taken for a replaced library.
TEST(AgentFactsTest, AnAgentAttachedThroughMemfdsIsFound) {
  const AgentMapping m = ParseAgentMapping(
      "7f00-7f10 r--p 00000000 00:01 7   /memfd:memprof-agent (deleted)\n"
      "7f20-7f30 r--p 00000000 00:01 8   /memfd:memprof-agent-server (deleted)\n");
  EXPECT_EQ(m.core_path, "/memfd:memprof-agent");
  EXPECT_FALSE(m.core_deleted);
  EXPECT_EQ(m.server_path, "/memfd:memprof-agent-server");
}

TEST(AgentFactsTest, AReplacedLibraryIsSeenAsDeleted) {
  const AgentMapping m = ParseAgentMapping(
      "7f00-7f10 r-xp 00000000 fd:01 42   /opt/memprof/lib/libmemprof_agent.so (deleted)\n");
  EXPECT_EQ(m.core_path, "/opt/memprof/lib/libmemprof_agent.so");
  EXPECT_TRUE(m.core_deleted);
}

TEST(AgentFactsTest, KeepsOnlyTheAgentsVariablesOfTheEnvironment) {
  const auto env = ParseAgentEnvironment(ProcFixture("environ_other_dir"));
  EXPECT_EQ(env.at("MEMPROF_SOCKET_DIR"), "/run/memprof-other");
  EXPECT_TRUE(env.at("LD_PRELOAD").ends_with("libmemprof_agent.so")) << env.at("LD_PRELOAD");
  EXPECT_FALSE(env.contains("PATH"));
  EXPECT_FALSE(env.contains("MALLOC_CONF"));
}

TEST(AgentFactsTest, ReadsTheCredentialsOfADroppedProcess) {
  auto c = ParseCredentials(ProcFixture("status_dropped"));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_NE(c->effective_uid, 0u);
  EXPECT_EQ(c->real_uid, c->effective_uid);
  EXPECT_NE(c->effective_gid, 0u);
  EXPECT_FALSE(ParseCredentials("Name:\tx\n"));
}

TEST(AgentFactsTest, WhoMayWriteADirectory) {
  const ProcessCredentials user = RunningAs(kTargetUid);
  EXPECT_TRUE(MayWriteDirectory(DirFacts("/d", kTargetUid, 0700).st, user));
  EXPECT_FALSE(MayWriteDirectory(DirFacts("/d", 0, 0700).st, user));
  EXPECT_FALSE(MayWriteDirectory(DirFacts("/d", 0, 0755).st, user));
  EXPECT_TRUE(MayWriteDirectory(DirFacts("/d", 0, 01777).st, user));
  PathFacts group = DirFacts("/d", 0, 0770);
  group.st.st_gid = 4242;
  EXPECT_FALSE(MayWriteDirectory(group.st, user));
  ProcessCredentials member = user;
  member.groups = {4242};
  EXPECT_TRUE(MayWriteDirectory(group.st, member));
  EXPECT_TRUE(MayWriteDirectory(DirFacts("/d", kTargetUid, 0500).st, RunningAs(0)));
}

TEST(UnreachableAgentTest, AProcessWithoutTheAgentGetsTheWaysToGetOne) {
  MissingSocket m = PreloadedWithoutSocket();
  m.facts.mapping = ParseAgentMapping(ProcFixture("maps_without_agent"));
  ExpectError(ExplainMissingSocket(m), ErrorCode::kNotFound,
              "process 3101 (plain_target) has no memprof agent (no socket at "
              "/tmp/memprof/3101.sock, and no libmemprof_agent.so in its memory map); " +
                  HowToGetAnAgent(3101));
}

TEST(UnreachableAgentTest, WhatMemprofctlMayNotReadIsSaidNotGuessed) {
  MissingSocket m = PreloadedWithoutSocket();
  m.facts.mapping.reset();
  m.facts.mapping_error = "Permission denied";
  m.caller = kOtherUid;
  const Error e = ExplainMissingSocket(m);
  ExpectSays(e, ErrorCode::kNotFound,
             "process 3101 (plain_target) has no socket at /tmp/memprof/3101.sock, and "
             "memprofctl cannot tell whether it loaded the memprof agent: it may not read "
             "/proc/3101/maps (Permission denied; only the process's user and root may, and only "
             "root once the process changed its user); run memprofctl as root to find out. "
             "Without an agent: a running process gets one with `memprofctl attach --pid 3101`");
  // Root is refused only by a process beyond its reach; no advice to be root.
  m.caller = 0;
  const Error as_root = ExplainMissingSocket(m);
  ExpectSays(as_root, ErrorCode::kNotFound,
             "(Permission denied; memprofctl runs as root and still may not: the process is in "
             "another user namespace, or a security module restricts reading it). Without an");
  EXPECT_EQ(as_root.message.find("run memprofctl as root"), std::string::npos) << as_root.message;
}

TEST(UnreachableAgentTest, AnAgentSwitchedOffSaysSo) {
  MissingSocket m = PreloadedWithoutSocket();
  (*m.facts.environment)["MEMPROF_AGENT"] = "Off";
  ExpectError(
      ExplainMissingSocket(m), ErrorCode::kNotFound,
      "process 3101 (plain_target): memprof agent loaded but not serving: MEMPROF_AGENT=Off "
      "in its environment switches it off; restart the process without it");
}

TEST(UnreachableAgentTest, AProgramExecdByAProfiledProcessNamesIt) {
  MissingSocket m = PreloadedWithoutSocket();
  (*m.facts.environment)["MEMPROF_HOST_PID"] = "3000";
  const Error e = ExplainMissingSocket(m);
  ExpectSays(e, ErrorCode::kNotFound, "it was exec'd by profiled process 3000");
  EXPECT_NE(e.message.find("MEMPROF_CHILDREN=inherit"), std::string::npos);
  (*m.facts.environment)["MEMPROF_HOST_PID"] = "3101";  // exec'd in place: keeps its agent
  EXPECT_EQ(ExplainMissingSocket(m).message.find("exec'd"), std::string::npos);
}

TEST(UnreachableAgentTest, AnAgentServingInAnotherDirectoryNamesIt) {
  MissingSocket m = InOtherDirectory(kTargetUid, 0700);
  m.socket_in_agent_dir = true;
  ExpectError(ExplainMissingSocket(m), ErrorCode::kNotFound,
              "process 3101 (plain_target): memprof agent serves in /run/memprof-other "
              "(MEMPROF_SOCKET_DIR in its environment), not in /tmp/memprof; use "
              "MEMPROF_SOCKET_DIR=/run/memprof-other memprofctl ...");
}

TEST(UnreachableAgentTest, ADirectoryTheProcessCannotWriteNamesItsUser) {
  ExpectError(ExplainMissingSocket(InOtherDirectory(0, 0755)), ErrorCode::kFailedPrecondition,
              "process 3101 (plain_target): memprof agent loaded but not serving: socket directory "
              "/run/memprof-other is not writable by uid 54321, the user it runs as (owned by "
              "root, mode 0755); give it a directory that user may write to (the default "
              "/tmp/memprof is open to every user) and restart it");
}

TEST(UnreachableAgentTest, ADirectoryTheAgentRefusesSaysWhy) {
  MissingSocket m = PreloadedWithoutSocket();
  m.agent_dir_facts = DirFacts("/tmp/memprof", kOtherUid, 0700);
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kFailedPrecondition,
             "not serving: socket directory '/tmp/memprof' is owned by uid 54322, not by root or "
             "uid 54321, so the agent refused it; fix the directory or choose another "
             "MEMPROF_SOCKET_DIR, and restart the process");
  m.agent_dir_facts = DirFacts("/tmp/memprof", 0, 0777);
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kFailedPrecondition, "lacks the sticky bit");
  m.agent_dir_facts = MissingPath("/tmp/memprof");
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kFailedPrecondition,
             "socket directory /tmp/memprof does not exist");
  m.agent_dir = "relative/dir";
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kFailedPrecondition,
             "its MEMPROF_SOCKET_DIR 'relative/dir' is not an absolute path");
}

TEST(UnreachableAgentTest, AnUnreadableEnvironmentIsAnAssumptionNotAFact) {
  MissingSocket m = PreloadedWithoutSocket();
  m.facts.environment.reset();
  m.facts.environment_error = "Permission denied";
  m.caller = kOtherUid;
  m.agent_dir_facts = DirFacts("/tmp/memprof", 0, 0755);
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kFailedPrecondition,
             "(if it uses /tmp/memprof too: memprofctl may not read its environment, Permission "
             "denied)");
  m.agent_dir_facts = DirFacts("/tmp/memprof", 0, 01777);
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kNotFound,
             "memprofctl may not read its environment (/proc/3101/environ: Permission denied), "
             "which may switch it off or name another MEMPROF_SOCKET_DIR; run memprofctl as root "
             "to find out");
}

TEST(UnreachableAgentTest, ALinkedAgentNeverStartedIsTold) {
  MissingSocket m = PreloadedWithoutSocket();
  m.facts.environment = std::map<std::string, std::string>{};
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kNotFound,
             "the program links libmemprof_agent.so and its agent is not running: "
             "memprof_agent_start() was not called or failed, or memprof_agent_stop() stopped it");
  (*m.facts.environment)["MEMPROF_FORK"] = "off";
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kNotFound,
             "MEMPROF_FORK=off in its environment gives a forked child no agent of its own");
}

TEST(UnreachableAgentTest, NothingFoundSaysHowToFindOut) {
  ExpectSays(ExplainMissingSocket(PreloadedWithoutSocket()), ErrorCode::kNotFound,
             "memprof agent loaded but not serving: no socket at /tmp/memprof/3101.sock; neither "
             "its environment nor its socket directory /tmp/memprof explains why (a forked child "
             "publishes its socket 200 ms after fork()); with MEMPROF_LOG_LEVEL=info in its "
             "environment the agent logs why on its stderr");
}

// The socket file (or its whole directory) removed while the agent sleeps:
// the process still listens on the path, which /proc/<pid>/net/unix shows.
TEST(UnreachableAgentTest, ARemovedSocketFileIsSaidWithWhatBringsItBack) {
  MissingSocket m = PreloadedWithoutSocket();
  m.listening_on_removed_file = true;
  const Error e = ExplainMissingSocket(m);
  ExpectSays(e, ErrorCode::kUnavailable,
             "process 3101 (plain_target): memprof agent running but unreachable: its socket "
             "/tmp/memprof/3101.sock was removed (from /tmp/memprof) while the agent listened on "
             "it");
  ExpectSays(e, ErrorCode::kUnavailable, "restart the process");
  m.agent_dir_facts = MissingPath(m.agent_dir);
  ExpectSays(ExplainMissingSocket(m), ErrorCode::kUnavailable,
             "was removed (with its directory /tmp/memprof)");
}

// The agent binds in a private directory beside its socket and renames the
// socket into place, so net/unix shows the path as bound, not the final one.
TEST(UnreachableAgentTest, ListeningSocketsUnderReadsNetUnix) {
  const std::string net_unix =
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 41321 /tmp/memprof/.mAb12Cd/s\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 41322 /tmp/memprof/3102.sock\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 41323 /tmp/my dir/.mXyZ987/s\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 41325 /tmp/memprof-other/1.sock\n"
      "0000000000000000: 00000002 00000000 00000000 0002 01  4132\n";
  EXPECT_EQ(ListeningSocketsUnder(net_unix, "/tmp/memprof"), std::vector<uint64_t>{41321})
      << "connected sockets and other directories are not the agent's";
  EXPECT_EQ(ListeningSocketsUnder(net_unix, "/tmp/my dir"), std::vector<uint64_t>{41323});
  EXPECT_EQ(ListeningSocketsUnder(net_unix, "/run"), std::vector<uint64_t>{});
  EXPECT_EQ(ListeningSocketsUnder("", "/tmp/memprof"), std::vector<uint64_t>{});
}

TEST(UnreachableAgentTest, ADirectoryMemprofctlMayNotEnterIsPermissionDenied) {
  MissingSocket m = PreloadedWithoutSocket();
  m.socket = MissingPath(m.socket_path, EACCES);
  m.looked_in = DirFacts("/tmp/memprof", kOtherUid, 0700);
  m.caller = kTargetUid;
  ExpectError(ExplainMissingSocket(m), ErrorCode::kPermissionDenied,
              "permission denied looking for /tmp/memprof/3101.sock: memprofctl runs as uid 54321, "
              "which may not enter /tmp/memprof (owned by uid 54322, mode 0700); run memprofctl as "
              "root or as the directory's owner");
}

DeniedSocket Denied(uid_t socket_owner, uid_t process_user, uid_t caller) {
  DeniedSocket d;
  d.pid = 3101;
  d.socket_path = "/tmp/memprof/3101.sock";
  d.socket.path = d.socket_path;
  d.socket.st.st_mode = S_IFSOCK | 0600;
  d.socket.st.st_uid = socket_owner;
  d.directory = DirFacts("/tmp/memprof", 0, 01777);
  d.credentials = RunningAs(process_user);
  d.caller = caller;
  return d;
}

TEST(UnreachableAgentTest, AnotherUsersSocketSaysWhoMayUseIt) {
  ExpectError(ExplainDeniedSocket(Denied(kOtherUid, kOtherUid, kTargetUid)),
              ErrorCode::kPermissionDenied,
              "permission denied connecting to /tmp/memprof/3101.sock: the socket belongs to uid "
              "54322, the user pid 3101 runs as, and only that user and root may use it; run "
              "memprofctl as that user or as root");
  ExpectSays(ExplainDeniedSocket(Denied(0, 0, kTargetUid)), ErrorCode::kPermissionDenied,
             "the socket belongs to root, the user pid 3101 runs as, and only that user and root "
             "may use it; run memprofctl as root");
}

TEST(UnreachableAgentTest, AServiceThatDroppedRootKeepsARootSocket) {
  const Error e = ExplainDeniedSocket(Denied(0, kTargetUid, kTargetUid));
  EXPECT_EQ(e.code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(e.message,
            "permission denied connecting to /tmp/memprof/3101.sock: the socket is owned by root: "
            "the agent of pid 3101 published it while the process ran as root, and the process "
            "has since dropped to uid 54321, the user memprofctl runs as; a socket keeps the "
            "owner it was made with, so only root may connect: run memprofctl as root (or start "
            "the service as that user from the outset, so that its agent publishes as it)");
  EXPECT_EQ(
      ExplainDeniedSocket(Denied(0, kTargetUid, kOtherUid)).message.find("memprofctl runs as"),
      std::string::npos);
}

DroppedConnections Dropped(const std::string& maps) {
  DroppedConnections d;
  d.facts.pid = 3101;
  d.facts.name = "plain_target";
  d.facts.credentials = RunningAs(kTargetUid);
  d.facts.mapping = ParseAgentMapping(maps);
  d.facts.environment = std::map<std::string, std::string>{};
  d.module_path = ServerModulePath(d.facts);
  d.module = MissingPath(d.module_path);
  return d;
}

const Error kTransportClosed(ErrorCode::kUnavailable,
                             "the memprof agent of pid 3101 (plain_target) is not answering on "
                             "/tmp/memprof/3101.sock (Transport closed) (tried 3 times)");

TEST(UnreachableAgentTest, AMissingServerModuleIsNamedWithItsPlace) {
  const DroppedConnections d =
      Dropped("7f00-7f10 r-xp 00000000 fd:01 42   /opt/memprof/lib/libmemprof_agent.so.0\n");
  EXPECT_EQ(d.module_path, "/opt/memprof/lib/libmemprof_agent_server.so");
  ExpectError(ExplainDroppedConnections(d, kTransportClosed), ErrorCode::kFailedPrecondition,
              "the memprof agent of process 3101 (plain_target) closes every connection: it could "
              "not load its server module /opt/memprof/lib/libmemprof_agent_server.so: no such "
              "file (the agent looks for it beside itself); install libmemprof_agent_server.so "
              "there (it ships with libmemprof_agent.so), or set MEMPROF_SERVER_LIBRARY to its "
              "path in the process's environment, and restart the process");
}

TEST(UnreachableAgentTest, AModuleThatIsThereButDidNotLoadSaysWhatToCheck) {
  DroppedConnections d = Dropped(ProcFixture("maps_preloaded"));
  (*d.facts.environment)["MEMPROF_SERVER_LIBRARY"] = "/srv/lib/server.so";
  d.module_path = ServerModulePath(d.facts);
  EXPECT_EQ(d.module_path, "/srv/lib/server.so");
  d.module = DirFacts(d.module_path, 0, 0600);
  ExpectSays(ExplainDroppedConnections(d, kTransportClosed), ErrorCode::kFailedPrecondition,
             "could not load its server module /srv/lib/server.so: the file is there but did not "
             "load (not readable by uid 54321, a library it needs is missing (`ldd "
             "/srv/lib/server.so` shows which)");
}

TEST(UnreachableAgentTest, ACoreReplacedSinceItWasMappedIsSaid) {
  DroppedConnections d =
      Dropped("7f00-7f10 r-xp 00000000 fd:01 42   /usr/lib/libmemprof_agent.so.0 (deleted)\n");
  d.module = DirFacts(d.module_path, 0, 0644);
  ExpectSays(ExplainDroppedConnections(d, kTransportClosed), ErrorCode::kFailedPrecondition,
             "could not load its server module /usr/lib/libmemprof_agent_server.so "
             "(/usr/lib/libmemprof_agent.so.0 was replaced or removed after the process started): "
             "the file is there but did not load");
}

TEST(UnreachableAgentTest, DroppedConnectionsWithTheModuleLoadedKeepTheirError) {
  Error e = ExplainDroppedConnections(Dropped(ProcFixture("maps_serving")), kTransportClosed);
  ExpectSays(e, ErrorCode::kUnavailable, "is loaded; the process logs why");
  EXPECT_TRUE(e.message.starts_with(kTransportClosed.message)) << e.message;

  DroppedConnections unreadable = Dropped("");
  unreadable.facts.mapping.reset();
  unreadable.facts.mapping_error = "Permission denied";
  ExpectSays(ExplainDroppedConnections(unreadable, kTransportClosed), ErrorCode::kUnavailable,
             "memprofctl could not check whether its server module is missing (it may not read "
             "/proc/3101/maps: Permission denied)");

  DroppedConnections linked = Dropped(ProcFixture("maps_without_agent"));
  linked.facts.executable = "/srv/bin/server";
  linked.module_path = ServerModulePath(linked.facts);
  linked.module = MissingPath(linked.module_path);
  // No agent library mapped: nothing is claimed, only what was seen.
  ExpectSays(ExplainDroppedConnections(linked, kTransportClosed), ErrorCode::kUnavailable,
             "an agent linked into the program looks for its server module at "
             "/srv/bin/libmemprof_agent_server.so, which does not exist");
}

// A fake /proc root in `tmp` holding pid 3101: the recorded status, and
// `maps` and `environ` as given. Returns the root.
std::string FakeProc3101(const TempDir& tmp, const std::string& maps, const std::string& environ) {
  const std::string proc = tmp.File("proc");
  MakeDirs(proc + "/3101");
  WriteFile(proc + "/3101/status", ProcFixture("status_preloaded"));
  WriteFile(proc + "/3101/maps", maps);
  WriteFile(proc + "/3101/environ", environ);
  return proc;
}

// The edge: what DiagnoseMissingSocket reads under a /proc root and in the
// file system.
TEST(UnreachableAgentTest, DiagnosisReadsTheProcessAndItsDirectory) {
  TempDir tmp;
  const std::string mine = tmp.File("mine");
  const std::string theirs = tmp.File("theirs");
  MakeDirs(mine);
  MakeDirs(theirs);
  std::string environ = "LD_PRELOAD=/usr/lib/libmemprof_agent.so";
  environ += '\0';
  environ += "MEMPROF_SOCKET_DIR=" + theirs + "/";
  environ += '\0';
  const std::string proc = FakeProc3101(tmp, ProcFixture("maps_preloaded"), environ);
  MakeSocketFile(theirs + "/3101.sock");
  ExpectSays(DiagnoseMissingSocket(proc, 3101, mine, mine + "/3101.sock"), ErrorCode::kNotFound,
             "memprof agent serves in " + theirs + " (MEMPROF_SOCKET_DIR");
}

TEST(UnreachableAgentTest, DiagnosisOfDroppedConnectionsLooksThroughTheProcessRoot) {
  TempDir tmp;
  const std::string lib = tmp.File("lib");
  MakeDirs(lib);
  const std::string proc = FakeProc3101(
      tmp, "7f00-7f10 r-xp 00000000 fd:01 42   " + lib + "/libmemprof_agent.so.0.1.0\n", "");
  ASSERT_EQ(::symlink("/", (proc + "/3101/root").c_str()), 0);
  ExpectSays(
      DiagnoseDroppedConnections(proc, 3101, kTransportClosed), ErrorCode::kFailedPrecondition,
      "could not load its server module " + lib + "/libmemprof_agent_server.so: no such file");
  WriteFile(lib + "/libmemprof_agent_server.so", "");
  ExpectSays(DiagnoseDroppedConnections(proc, 3101, kTransportClosed),
             ErrorCode::kFailedPrecondition, "the file is there but did not load");
}

}  // namespace
}  // namespace memprof::cli
