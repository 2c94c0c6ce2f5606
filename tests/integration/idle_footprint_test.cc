// What an idle agent (loaded, never contacted) costs its host, in what the
// host can count: mapped libraries, threads, signal dispositions and masks,
// descriptors (docs/contract.md rule 9). RSS and wake-ups are measured
// side by side in tests/bench/idle_cost.sh instead: as assertions they would
// depend on the machine.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::seconds;

// Agent descriptors sit at high numbers, away from the small ones hosts reuse
// or assume to be free (3, 4, 5, ... and systemd's LISTEN_FDS from 3 on).
constexpr int kLowestAgentFd = 16;

// A SigCgt/SigIgn mask without glibc's internal signals 32 and 33: glibc
// installs their handlers itself when a process creates its first thread
// (nptl's late_init), which the agent may do; the host never sees them.
std::optional<uint64_t> HostSignals(std::optional<uint64_t> mask) {
  if (mask) *mask &= ~((uint64_t{1} << 31) | (uint64_t{1} << 32));
  return mask;
}

std::vector<ThreadInfo> AgentThreads(const std::vector<ThreadInfo>& threads) {
  std::vector<ThreadInfo> out;
  std::copy_if(threads.begin(), threads.end(), std::back_inserter(out),
               [](const ThreadInfo& t) { return t.comm.starts_with("memprof-"); });
  return out;
}

std::string Describe(const std::vector<ThreadInfo>& threads) {
  std::string out;
  for (const ThreadInfo& t : threads) {
    char blk[32];
    std::snprintf(blk, sizeof(blk), "%016llx", static_cast<unsigned long long>(t.sig_blk));
    out += "\n  tid " + std::to_string(t.tid) + " '" + t.comm + "' SigBlk " + blk;
  }
  return out;
}

class IdleFootprintTest : public GuestTest {
 protected:
  // plain_target (jemalloc, single-threaded, installs SIGTERM/SIGINT
  // handlers) with the agent preloaded, never contacted; or, with
  // `agent` false, the same process with MEMPROF_AGENT=off.
  TargetProcess* StartPlain(bool agent) {
    TargetOptions options;
    options.argv = {kPlainTarget};
    options.env = {{"LD_PRELOAD", kAgentPreload},
                   {"MALLOC_CONF", kProfilingReadyConf},
                   {"MEMPROF_IDLE_TIMEOUT", "1s"}};
    options.await_handshake_closed = true;
    if (agent) {
      options.connect_to_agent = false;
    } else {
      options.env["MEMPROF_AGENT"] = "off";
      options.expect_agent = false;
    }
    return Start(options);
  }
};

TEST_F(IdleFootprintTest, AnIdleAgentMapsNoHeavyLibraryAndRunsOneThreadThatBlocksAllSignals) {
  TargetProcess* without = StartPlain(false);
  ASSERT_NE(without, nullptr);
  TargetProcess* with = StartPlain(true);
  ASSERT_NE(with, nullptr);

  EXPECT_EQ(HeavyLibraries(MappedLibraries(with->pid())), std::vector<std::string>{})
      << "an idle agent maps gRPC, protobuf, abseil or OpenSSL";

  const std::vector<ThreadInfo> host = ReadThreads(without->pid());
  const std::vector<ThreadInfo> threads = ReadThreads(with->pid());
  const std::vector<ThreadInfo> agent = AgentThreads(threads);
  EXPECT_EQ(threads.size(), host.size() + 1) << Describe(threads);
  ASSERT_EQ(agent.size(), 1u) << "want one thread named memprof-*:" << Describe(threads);
  EXPECT_TRUE(BlocksAllSignals(agent[0].sig_blk)) << Describe(agent);

  // No signal handler installed, none ignored: the host's dispositions only.
  for (const char* field : {"SigCgt", "SigIgn"}) {
    EXPECT_EQ(HostSignals(ReadSignalMask(with->pid(), field)),
              HostSignals(ReadSignalMask(without->pid(), field)))
        << field;
  }
}

TEST_F(IdleFootprintTest, AnIdleAgentsDescriptorsAreCloseOnExecAndHigh) {
  TargetProcess* with = StartPlain(true);
  ASSERT_NE(with, nullptr);
  // plain_target opens nothing (its handshake pipe is closed by now): every
  // descriptor above stderr is the agent's.
  std::vector<int> agent_fds;
  for (const auto& [fd, target] : ReadFdTargets(with->pid())) {
    if (fd <= 2) continue;
    agent_fds.push_back(fd);
    EXPECT_GE(fd, kLowestAgentFd) << "agent fd " << fd << " (" << target << ") is a low number";
    auto flags = ReadFdFlags(with->pid(), fd);
    ASSERT_TRUE(flags.has_value()) << fd;
    EXPECT_NE(*flags & O_CLOEXEC, 0u)
        << "agent fd " << fd << " (" << target << ") is not close-on-exec";
  }
  EXPECT_FALSE(agent_fds.empty()) << "the agent has no socket open";
}

TEST_F(IdleFootprintTest, AfterAClientLeavesTheHostReturnsToTheIdleThreadCount) {
  TargetProcess* with = StartPlain(true);
  ASSERT_NE(with, nullptr);
  const size_t idle = ReadThreads(with->pid()).size();
  const auto sig_cgt = ReadSignalMask(with->pid(), "SigCgt");
  const auto sig_ign = ReadSignalMask(with->pid(), "SigIgn");

  ExpectServed(with->pid());  // the server part comes in now (libraries may appear)
  const std::vector<ThreadInfo> serving = ReadThreads(with->pid());
  std::vector<ThreadInfo> unblocked;
  for (const ThreadInfo& t : serving) {
    // Every thread but the host's own is the agent's (gRPC's included).
    if (t.tid != with->pid() && !BlocksAllSignals(t.sig_blk)) unblocked.push_back(t);
  }
  EXPECT_EQ(unblocked.size(), 0u) << "agent threads that do not block all signals:"
                                  << Describe(unblocked) << "\nall threads:" << Describe(serving);
  EXPECT_EQ(HostSignals(ReadSignalMask(with->pid(), "SigCgt")), HostSignals(sig_cgt));
  EXPECT_EQ(HostSignals(ReadSignalMask(with->pid(), "SigIgn")), HostSignals(sig_ign));

  // MEMPROF_IDLE_TIMEOUT=1s: the server part goes, and its threads with it.
  EXPECT_TRUE(WaitUntil([&] { return ReadThreads(with->pid()).size() == idle; }, seconds(30)))
      << "idle: " << idle << " threads; now:" << Describe(ReadThreads(with->pid()));
  EXPECT_EQ(AgentThreads(ReadThreads(with->pid())).size(), 1u)
      << Describe(ReadThreads(with->pid()));
  // And it comes back for the next client.
  ExpectServed(with->pid());
}

TEST_F(IdleFootprintTest, TheAgentsThreadsKeepTheNamesTheyGiveThemselves) {
  TargetProcess* with = StartPlain(true);
  ASSERT_NE(with, nullptr);
  // A timed activation starts the window's timer thread in the server part,
  // whose pthread_setname_np prefixes "memprof-" to the names gRPC gives.
  CommandResult r = Cli({"activate", "--pid", std::to_string(with->pid()), "--for", "5m"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const auto named = [&](const std::string& name) {
    const std::vector<ThreadInfo> threads = ReadThreads(with->pid());
    return std::count_if(threads.begin(), threads.end(),
                         [&](const ThreadInfo& t) { return t.comm == name; });
  };
  EXPECT_TRUE(WaitUntil([&] { return named("memprof-window") == 1; }, seconds(10)))
      << Describe(ReadThreads(with->pid()));
  EXPECT_EQ(named("memprof-memprof"), 0) << Describe(ReadThreads(with->pid()));
  EXPECT_EQ(Cli({"deactivate", "--pid", std::to_string(with->pid())}).exit_code, 0);
}

}  // namespace
}  // namespace memprof::integration
