// `memprofctl attach`: the agent loaded into processes that were
// started without it, with the real memprofctl, real jemalloc and glibc
// targets, and what the target must not notice.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/integration/harness/test_user.h"

namespace memprof::integration {
namespace {

class AttachTest : public IntegrationTest {
 protected:
  // A target with no agent: only its handshake is awaited.
  TargetProcess* StartPlain(const std::string& program, std::map<std::string, std::string> env) {
    TargetOptions options;
    options.argv = {program};
    options.env = std::move(env);
    options.expect_agent = false;
    return Start(options);
  }

  // attach --pid, checked to succeed; its JSON.
  nlohmann::json Attach(const TargetProcess& t) {
    CommandResult r = CliFor(t, "attach", {"--json"});
    EXPECT_EQ(r.exit_code, 0) << r;
    return ParseJsonOutput(r);
  }

  static bool AgentMapped(pid_t pid) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (line.find("libmemprof_agent") != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(AttachTest, AProfilingJemallocTargetIsAttachedAndProfiled) {
  TargetProcess* t = StartPlain(kPlainTarget, {{"MALLOC_CONF", "prof:true"}});
  ASSERT_NE(t, nullptr);
  ASSERT_FALSE(AgentMapped(t->pid()));
  nlohmann::json j = Attach(*t);
  EXPECT_EQ(j.value("allocator", ""), "jemalloc");
  EXPECT_EQ(j.value("attached", false), true);
  EXPECT_EQ(j.value("profiling_at_start", ""), "enabled");
  EXPECT_TRUE(AgentMapped(t->pid()));
  EXPECT_EQ(StatusJson(*t)["started_by"], "attach");
  const std::string report = DumpUntilJeprofNames(*t, kPlainTarget,
                                                  "PlainTargetAllocate");
  EXPECT_NE(report.find("PlainTargetAllocate"), std::string::npos) << report;
  const std::vector<double> pauses = j["pause_ms"].get<std::vector<double>>();
  EXPECT_EQ(pauses.size(), 2u);
  auto status = t->Terminate();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0);
}

TEST_F(AttachTest, AttachingTwiceSaysAlreadyAttached) {
  TargetProcess* t = StartPlain(kPlainTarget, {{"MALLOC_CONF", "prof:true"}});
  ASSERT_NE(t, nullptr);
  Attach(*t);
  CommandResult again = CliFor(*t, "attach");
  EXPECT_EQ(again.exit_code, 0) << again;
  EXPECT_NE(again.out.find("already attached"), std::string::npos) << again;
}

// jemalloc started without prof:true: memprof's own sampler serves the heap
// profiles and the allocation windows; nothing is refused.
TEST_F(AttachTest, AJemallocTargetWithoutProfilingIsSampledByMemprof) {
  TargetProcess* t = StartPlain(kPlainTarget, {});
  ASSERT_NE(t, nullptr);
  CommandResult dry = CliFor(*t, "attach", {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry;
  EXPECT_NE(dry.out.find("sampler:    memprof's own: heap profiles of what is allocated from "
                         "activation on"),
            std::string::npos)
      << dry;
  EXPECT_EQ(dry.out.find("refused:"), std::string::npos) << dry;
  EXPECT_NE(dry.out.find("profile --allocations"), std::string::npos) << dry;
  EXPECT_FALSE(AgentMapped(t->pid())) << "--dry-run loaded the agent";
  nlohmann::json j = Attach(*t);
  EXPECT_EQ(j.value("profiling_at_start", ""), "disabled");
  EXPECT_EQ(j.value("sampler", ""), "memprof");
  EXPECT_EQ(CliFor(*t, "stats").exit_code, 0);
  EXPECT_EQ(CliFor(*t, "doctor").exit_code, 0);
  EXPECT_EQ(CliFor(*t, "purge").exit_code, 0);
  EXPECT_EQ(StatusJson(*t)["sampler"], "memprof");
  CommandResult activate = CliFor(*t, "activate");
  EXPECT_EQ(activate.exit_code, 0) << activate;
  const std::string heap = dir().File("sampled.heap");
  ASSERT_EQ(CliFor(*t, "dump", {"--out", heap}).exit_code, 0);
  EXPECT_TRUE(ReadFile(heap).starts_with("heap_v2/524288\n# memprof_sampler since_unix_ms="))
      << ReadFile(heap).substr(0, 200);
  CommandResult window = CliFor(*t, "profile", {"--allocations", "--duration", "1s", "--out",
                                                dir().File("window.alloc")});
  EXPECT_EQ(window.exit_code, 0) << window;
}

TEST_F(AttachTest, AGlibcTargetServesStatsDoctorAndPurge) {
  TargetProcess* t = StartPlain(kGlibcTarget, {});
  ASSERT_NE(t, nullptr);
  nlohmann::json j = Attach(*t);
  EXPECT_EQ(j.value("allocator", ""), "glibc");
  EXPECT_EQ(CliFor(*t, "stats").exit_code, 0);
  EXPECT_EQ(CliFor(*t, "doctor").exit_code, 0);
  CommandResult purge = CliFor(*t, "purge");
  EXPECT_EQ(purge.exit_code, 0) << purge;
  EXPECT_NE(purge.out.find("malloc_trim"), std::string::npos) << purge;
  EXPECT_EQ(j.value("sampler", ""), "memprof");
  CommandResult activate = CliFor(*t, "activate");
  EXPECT_EQ(activate.exit_code, 0) << activate;
  EXPECT_EQ(CliFor(*t, "deactivate").exit_code, 0);
}

TEST_F(AttachTest, MemprofAgentOffInTheTargetsEnvironmentIsRespected) {
  TargetProcess* t = StartPlain(kPlainTarget, {{"MEMPROF_AGENT", "off"}});
  ASSERT_NE(t, nullptr);
  ExpectCliError(CliFor(*t, "attach"), 5, "MEMPROF_AGENT=off");
  EXPECT_FALSE(AgentMapped(t->pid()));
}

// Another user may not attach to root's process: exit 4 with the reason,
// and the process is untouched (no agent, no socket).
TEST_F(AttachTest, AnotherUserIsRefusedAndTheTargetIsUntouched) {
  auto user = EnsureTestUser();
  if (!user) GTEST_SKIP() << "needs root to create a test user: " << user.error().message;
  ASSERT_EQ(::chmod(dir().path().c_str(), 0711), 0);
  TargetProcess* t = StartPlain(kPlainTarget, {{"MALLOC_CONF", "prof:true"}});
  ASSERT_NE(t, nullptr);
  CommandResult r = RunCommand(
      user->Wrap({kMemprofctl, "attach", "--pid", std::to_string(t->pid())}),
      {{"MEMPROF_AGENT_LIB", kAgentLibrary}});
  ExpectCliError(r, 4, "runs as another user");
  EXPECT_FALSE(AgentMapped(t->pid()));
  EXPECT_FALSE(IsSocketFile(dir().File(std::to_string(t->pid()) + ".sock")));
}

// A user who may not attach hears that first, not that the agent's library
// cannot be found (which attaching would not be allowed to use anyway).
TEST_F(AttachTest, AnotherUserHearsTheRefusalBeforeAMissingLibrary) {
  auto user = EnsureTestUser();
  if (!user) GTEST_SKIP() << "needs root to create a test user: " << user.error().message;
  ASSERT_EQ(::chmod(dir().path().c_str(), 0711), 0);
  TargetProcess* t = StartPlain(kPlainTarget, {{"MALLOC_CONF", "prof:true"}});
  ASSERT_NE(t, nullptr);
  const std::vector<std::string> attach = {kMemprofctl, "attach", "--pid",
                                           std::to_string(t->pid())};
  const std::map<std::string, std::string> missing = {
      {"MEMPROF_AGENT_LIB", dir().File("no-such-libmemprof_agent.so")}};
  ExpectCliError(RunCommand(user->Wrap(attach), missing), 4, "runs as another user");
  // Root may attach: for it the missing library is the first cause.
  ExpectCliError(RunCommand(attach, missing), 2, "no such readable file");
  EXPECT_FALSE(AgentMapped(t->pid()));
  EXPECT_FALSE(IsSocketFile(dir().File(std::to_string(t->pid()) + ".sock")));
}

TEST_F(AttachTest, ANonexistentPidIsNotFound) {
  ExpectCliError(Cli({"attach", "--pid", "999999999"}), 3, "no process with pid 999999999");
}

// Fifty fresh targets, each attached while four threads hammer malloc and
// free and a fifth dlopen()s and dlclose()s a library: each must be served
// at once and exit 0 on SIGTERM (its own checks of every block held). In
// every other one the main thread hammers too, so no thread is asleep and
// attach must find one outside malloc, free and the loader by unwinding.
TEST_F(AttachTest, AttachingDuringMallocFreeAndDlopenNeverHurtsTheTarget) {
  for (int i = 0; i < 50; ++i) {
    SCOPED_TRACE("attach " + std::to_string(i));
    TargetOptions options;
    options.argv = {MEMPROF_IT_ATTACH_STRESS_TARGET, MEMPROF_IT_SERVICE_CACHE_LIBRARY};
    if (i % 2 == 1) options.argv.push_back("--busy-main");
    options.expect_agent = false;
    TargetProcess* t = Start(options);
    ASSERT_NE(t, nullptr);
    CommandResult r = CliFor(*t, "attach");
    ASSERT_EQ(r.exit_code, 0) << r;
    ASSERT_EQ(CliFor(*t, "stats").exit_code, 0);
    auto status = t->Terminate();
    ASSERT_TRUE(status.has_value());
    ASSERT_EQ(status->ShellCode(), 0);
  }
}

}  // namespace
}  // namespace memprof::integration
