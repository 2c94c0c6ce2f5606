// Fork: a forked child never serves or removes its parent's socket, and the
// parent's agent removes the socket of a child that ended without doing so.
// A child keeps its parent's profiling window: it stops sampling when the
// parent does. With
// MEMPROF_FORK=follow (the default) every worker gets an agent of its own,
// unless its parent's gRPC was live at fork() time (then it is refused, and
// says why); with off it gets none unless it calls memprof_agent_start().
#include <gtest/gtest.h>
#include <signal.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/harness/integration_fixture.h"
#include "tests/integration/harness/process_gauges.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Worker {
  pid_t pid = 0;
  std::string agent;  // memprof_agent_start()'s result, or "none"
};

class ForkTest : public IntegrationTest {
 protected:
  TargetProcess* StartForking(bool worker_agent, const std::string& idle_timeout = "30s",
                              const std::string& fork_policy = "follow",
                              const std::vector<std::string>& extra_args = {},
                              const std::string& malloc_conf = kProfilingReadyConf) {
    TargetOptions options;
    options.argv = {kForkingTarget};
    if (worker_agent) options.argv.push_back("--worker-agent");
    options.argv.insert(options.argv.end(), extra_args.begin(), extra_args.end());
    // debug: the agent logs when its gRPC server is completely gone.
    options.env = {{"MALLOC_CONF", malloc_conf},
                   {"MEMPROF_IDLE_TIMEOUT", idle_timeout},
                   {"MEMPROF_FORK", fork_policy},
                   {"MEMPROF_LOG_LEVEL", "debug"}};
    return Start(options);
  }

  // The workers the target has announced on stdout so far.
  static std::vector<Worker> Workers(TargetProcess& target) {
    static const std::regex line(R"(worker (\d+) agent (\S+))");
    std::vector<Worker> workers;
    const std::string out = target.process().StdoutText();
    for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
      workers.push_back({std::stoi((*it)[1]), (*it)[2]});
    }
    return workers;
  }

  // Waits until the target has announced `count` workers; the last one.
  static std::optional<Worker> AwaitWorker(TargetProcess& target, size_t count) {
    if (!WaitUntil([&] { return Workers(target).size() >= count; }, seconds(60))) {
      ADD_FAILURE() << "no worker #" << count << "\n" << target.process().StderrText();
      return std::nullopt;
    }
    return Workers(target)[count - 1];
  }

  // A worker is its parent's child, so after exiting it stays a zombie until
  // the parent reaps it: "exited" means gone or in state Z.
  static bool Exited(pid_t pid) {
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    return stat.empty() || stat.find(") Z ") != std::string::npos;
  }

  std::string SocketOf(pid_t pid) const { return SocketDir() + "/" + std::to_string(pid) + ".sock"; }

  // What a worker says of its sampling: jemalloc's prof.active, and
  // whether memprof's own sampler intercepts its malloc.
  struct WorkerSampling {
    bool prof_active = false;
    bool hooked = false;
    bool operator==(const WorkerSampling&) const = default;
  };

  // Asks the worker how it samples (SIGUSR2), and waits for its answer: the
  // `nth` answer it has printed.
  static std::optional<WorkerSampling> AskWorker(TargetProcess& target, pid_t pid, size_t nth) {
    const std::regex line("worker " + std::to_string(pid) + R"( prof\.active (\d) hooked (\d))");
    auto answers = [&] {
      const std::string out = target.process().StdoutText();
      std::vector<WorkerSampling> found;
      for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
        found.push_back({(*it)[1] == "1", (*it)[2] == "1"});
      }
      return found;
    };
    if (::kill(pid, SIGUSR2) != 0) return std::nullopt;
    if (!WaitUntil([&] { return answers().size() >= nth; }, seconds(30))) return std::nullopt;
    return answers()[nth - 1];
  }

  // Whether jemalloc samples in the worker (its `nth` answer).
  static std::optional<bool> WorkerProfActive(TargetProcess& target, pid_t pid, size_t nth) {
    auto answer = AskWorker(target, pid, nth);
    if (!answer) return std::nullopt;
    return answer->prof_active;
  }

  // Opens a timed window of `window` in the parent and has it fork its
  // second worker during it; that worker. With `once_grpc_is_gone` the fork
  // waits until the parent's gRPC has stopped for idleness (the parent must
  // run with a short MEMPROF_IDLE_TIMEOUT).
  std::optional<Worker> ForkDuringAWindow(TargetProcess& parent, const std::string& window,
                                          bool once_grpc_is_gone = false) {
    CommandResult activate =
        Cli({"activate", "--pid", std::to_string(parent.pid()), "--for", window});
    if (activate.exit_code != 0) {
      ADD_FAILURE() << activate;
      return std::nullopt;
    }
    if (once_grpc_is_gone && !AwaitGrpcGone(parent)) return std::nullopt;
    if (::kill(parent.pid(), SIGUSR1) != 0) return std::nullopt;
    return AwaitWorker(parent, 2);
  }

  // Waits until the parent logs that its gRPC server is completely gone
  // (threads joined): a fork then copies no thread of gRPC's.
  static bool AwaitGrpcGone(TargetProcess& parent) {
    if (WaitUntil([&] { return CountServerStops(parent.process().StderrText()) > 0; },
                  seconds(30))) {
      return true;
    }
    ADD_FAILURE() << "the parent's gRPC did not stop\n" << parent.process().StderrText();
    return false;
  }

  // With the first worker up and gRPC running in the parent (its EventEngine
  // then exists), has the parent fork a second worker; that worker once its
  // agent serves.
  std::optional<Worker> ForkWhileTheParentServes(TargetProcess& parent) {
    if (!AwaitWorker(parent, 1)) return std::nullopt;
    ExpectServedAs(parent.pid());
    if (::kill(parent.pid(), SIGUSR1) != 0) return std::nullopt;
    auto worker = AwaitWorker(parent, 2);
    if (!worker) return std::nullopt;
    if (!WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30))) {
      ADD_FAILURE() << "worker " << worker->pid << " has no agent\n"
                    << parent.process().StderrText();
      return std::nullopt;
    }
    ExpectServedAs(worker->pid);
    return worker;
  }

  void ExpectServedAs(pid_t pid) {
    CommandResult r = Cli({"status", "--pid", std::to_string(pid), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(ParseJsonOutput(r)["pid"], pid);
  }
};

TEST_F(ForkTest, AWorkerGetsItsOwnAgentByDefaultAndLeavesTheParentsSocketAlone) {
  TargetProcess* parent = StartForking(false);
  ASSERT_NE(parent, nullptr);
  auto worker = AwaitWorker(*parent, 1);
  ASSERT_TRUE(worker.has_value());
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30)))
      << parent->process().StderrText();
  ExpectServedAs(worker->pid);
  // The worker exits (running the library destructors it inherited): its own
  // socket goes, the parent's survives.
  ASSERT_EQ(::kill(worker->pid, SIGTERM), 0);
  ASSERT_TRUE(WaitUntil([&] { return Exited(worker->pid); }, seconds(10)));
  EXPECT_FALSE(FileExists(SocketOf(worker->pid)));
  ExpectServedAs(parent->pid());
  EXPECT_EQ(dir().List(), std::vector<std::string>{std::to_string(parent->pid()) + ".sock"});
}

TEST_F(ForkTest, WithForkOffAWorkerHasNoAgentAndLeavesTheParentsSocketAlone) {
  TargetProcess* parent = StartForking(false, "30s", "off");
  ASSERT_NE(parent, nullptr);
  auto worker = AwaitWorker(*parent, 1);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(worker->agent, "none");
  ExpectCliError(Cli({"status", "--pid", std::to_string(worker->pid)}), 3,
                 "MEMPROF_FORK=off in its environment gives a forked child no agent of its own");
  EXPECT_FALSE(FileExists(SocketOf(worker->pid)));
  ASSERT_EQ(::kill(worker->pid, SIGTERM), 0);
  ASSERT_TRUE(WaitUntil([&] { return Exited(worker->pid); }, seconds(10)));
  ExpectServedAs(parent->pid());
  EXPECT_EQ(dir().List(), std::vector<std::string>{std::to_string(parent->pid()) + ".sock"});
}

TEST_F(ForkTest, AWorkerThatStartsItsAgentIsServedAndCleansUpOnlyItsOwnSocket) {
  TargetProcess* parent = StartForking(true);
  ASSERT_NE(parent, nullptr);
  auto worker = AwaitWorker(*parent, 1);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(worker->agent, "0") << parent->process().StderrText();
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30)));
  ExpectServedAs(worker->pid);
  ExpectServedAs(parent->pid());
  const std::string out = SocketDir() + "/worker.heap";
  CommandResult dump = Cli({"dump", "--pid", std::to_string(worker->pid), "--out", out});
  ASSERT_EQ(dump.exit_code, 0) << dump;
  EXPECT_EQ(ReadFile(out).rfind("heap_v2/", 0), 0u);
  ASSERT_EQ(::kill(worker->pid, SIGTERM), 0);
  EXPECT_TRUE(WaitUntil([&] { return !FileExists(SocketOf(worker->pid)); }, seconds(10)));
  ExpectServedAs(parent->pid());
}

// The parent's gRPC is stopped before fork() so that the worker can start
// its own; the parent's agent starts gRPC again at its next connection.
TEST_F(ForkTest, AWorkerForkedWhileTheParentServesGetsItsOwnAgent) {
  TargetProcess* parent = StartForking(true);
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(AwaitWorker(*parent, 1).has_value());
  ExpectServedAs(parent->pid());  // the parent's gRPC server is now up (30 s idle timeout)
  ASSERT_EQ(::kill(parent->pid(), SIGUSR1), 0);
  auto worker = AwaitWorker(*parent, 2);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(worker->agent, "0") << parent->process().StderrText();
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30)))
      << parent->process().StderrText();
  ExpectServedAs(worker->pid);
  ExpectServedAs(parent->pid());
  EXPECT_EQ(parent->process().StderrText().find("not starting the agent"), std::string::npos)
      << parent->process().StderrText();
}

// Like a Varnish cache child: the worker closes every low descriptor right
// after fork() and opens an epoll set of its own on the freed numbers. What
// gRPC keeps open from the parent sits at high numbers, like the agent's own
// descriptors, so the worker still gets an agent, and its epoll set stays
// its own.
TEST_F(ForkTest, AWorkerThatClosesItsLowDescriptorsGetsAnAgentAndKeepsItsEpollSet) {
  TargetProcess* parent = StartForking(true, "30s", "follow", {"--worker-closes-fds"});
  ASSERT_NE(parent, nullptr);
  auto worker = ForkWhileTheParentServes(*parent);
  ASSERT_TRUE(worker.has_value());
  ExpectServedAs(parent->pid());
  EXPECT_FALSE(Exited(worker->pid));
  EXPECT_EQ(parent->process().StdoutText().find("foreign event"), std::string::npos)
      << parent->process().StdoutText();
}

// A worker that closes every descriptor (close_range(3, ~0U)) closes nothing
// of gRPC's: what gRPC keeps from the parent lives in the agent's own
// descriptor table, which the worker's agent makes anew (agent/core/private_fd_table.h).
// The worker gets its agent and is served, its epoll set stays its own, and
// it lives on.
TEST_F(ForkTest, AWorkerThatClosesEveryDescriptorGetsAnAgentAndKeepsItsEpollSet) {
  TargetProcess* parent = StartForking(true, "30s", "follow", {"--worker-closes-all-fds"});
  ASSERT_NE(parent, nullptr);
  auto worker = ForkWhileTheParentServes(*parent);
  ASSERT_TRUE(worker.has_value());
  const std::string heap = dir().File("worker.heap");
  CommandResult dump = Cli({"dump", "--pid", std::to_string(worker->pid), "--out", heap});
  EXPECT_EQ(dump.exit_code, 0) << dump << parent->process().StderrText();
  ExpectServedAs(parent->pid());
  // Time for gRPC to show itself in the worker's epoll set, were it there.
  EXPECT_FALSE(WaitUntil([&] { return Exited(worker->pid); }, milliseconds(1500)))
      << parent->process().StdoutText();
  EXPECT_EQ(parent->process().StdoutText().find("foreign event"), std::string::npos)
      << parent->process().StdoutText();
}

TEST_F(ForkTest, AWorkerForkedAfterTheParentsServerWentIdleGetsItsAgent) {
  TargetProcess* parent = StartForking(true, "1s");
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(AwaitWorker(*parent, 1).has_value());
  ExpectServedAs(parent->pid());
  // Served: gRPC comes up, and is shut down completely after the idle timeout.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return parent->process().StderrText().find("gRPC server stopped (idle)") !=
               std::string::npos;
      },
      seconds(20)))
      << parent->process().StderrText();
  ASSERT_EQ(::kill(parent->pid(), SIGUSR1), 0);
  auto worker = AwaitWorker(*parent, 2);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(worker->agent, "0") << parent->process().StderrText();
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30)));
  ExpectServedAs(worker->pid);
}

}  // namespace
}  // namespace memprof::integration

namespace memprof::integration {
namespace {

// A worker killed by a signal runs no destructor; its parent's agent watches
// it and removes the socket it left.
TEST_F(ForkTest, TheSocketOfAWorkerKilledByASignalIsRemovedByItsParentsAgent) {
  TargetProcess* parent = StartForking(false);
  ASSERT_NE(parent, nullptr);
  auto worker = AwaitWorker(*parent, 1);
  ASSERT_TRUE(worker.has_value());
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30)))
      << parent->process().StderrText();
  ASSERT_EQ(::kill(worker->pid, SIGKILL), 0);
  EXPECT_TRUE(WaitUntil([&] { return !FileExists(SocketOf(worker->pid)); }, seconds(10)))
      << "the killed worker's socket is still there";
  ExpectServedAs(parent->pid());
  EXPECT_EQ(dir().List(), std::vector<std::string>{std::to_string(parent->pid()) + ".sock"});
}

// A worker forked during a timed window samples until the parent's window
// ends, and then no longer.
TEST_F(ForkTest, AWorkerForkedDuringATimedWindowStopsSamplingWhenTheParentsWindowEnds) {
  TargetProcess* parent = StartForking(false);
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(AwaitWorker(*parent, 1).has_value());
  CommandResult activate = Cli({"activate", "--pid", std::to_string(parent->pid()), "--for", "4s"});
  ASSERT_EQ(activate.exit_code, 0) << activate;
  ASSERT_EQ(::kill(parent->pid(), SIGUSR1), 0);  // a second worker, inside the window
  auto worker = AwaitWorker(*parent, 2);
  ASSERT_TRUE(worker.has_value());
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30)))
      << parent->process().StderrText();
  CommandResult parent_status = Cli({"status", "--pid", std::to_string(parent->pid()), "--json"});
  CommandResult worker_status = Cli({"status", "--pid", std::to_string(worker->pid), "--json"});
  ASSERT_EQ(parent_status.exit_code, 0) << parent_status;
  ASSERT_EQ(worker_status.exit_code, 0) << worker_status;
  const auto parent_json = ParseJsonOutput(parent_status);
  const auto worker_json = ParseJsonOutput(worker_status);
  const int64_t window_end = parent_json["window_end_unix_ms"];
  ASSERT_GT(window_end, 0);
  EXPECT_EQ(worker_json["window_end_unix_ms"], window_end) << worker_status;
  // The window ends in both: status says so, and jemalloc in the worker agrees.
  auto inactive = [&](pid_t pid) {
    CommandResult r = Cli({"status", "--pid", std::to_string(pid), "--json"});
    return r.exit_code == 0 && ParseJsonOutput(r)["profiling_active"] == false;
  };
  EXPECT_TRUE(WaitUntil([&] { return inactive(parent->pid()); }, seconds(30)));
  EXPECT_TRUE(WaitUntil([&] { return inactive(worker->pid); }, seconds(30)))
      << "the worker still samples after its parent's window ended";
  EXPECT_EQ(WorkerProfActive(*parent, worker->pid, 1), std::optional<bool>(false));
}

// With MEMPROF_FORK=off a worker has no agent to end the window: it stops
// sampling at once instead of sampling for nobody.
//
// The fork comes once the parent's gRPC has stopped for idleness (with
// MEMPROF_FORK=off nothing stops it for the fork). Under AddressSanitizer a
// child forked while gRPC's threads allocate can inherit a lock of the
// sanitizer's allocator that nobody releases and hang at its first malloc
// (GCC 12's runtime takes no lock around fork(); docs/reliability.md). Which
// threads run at fork() changes nothing of the window's inheritance.
TEST_F(ForkTest, WithForkOffAWorkerForkedDuringATimedWindowDoesNotSample) {
  TargetProcess* parent = StartForking(false, "1s", "off");
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(AwaitWorker(*parent, 1).has_value());
  auto worker = ForkDuringAWindow(*parent, "1h", true);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(WorkerProfActive(*parent, worker->pid, 1), std::optional<bool>(false))
      << "a worker without an agent samples with nobody to end it";
  CommandResult status = Cli({"status", "--pid", std::to_string(parent->pid()), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status;
  EXPECT_EQ(ParseJsonOutput(status)["profiling_active"], true) << "the parent's window goes on";
}

// Where memprof's own sampler serves (jemalloc started without prof:true), a
// worker forked during a timed window keeps sampling in its own agent's
// window and stops when it ends; the parent's window goes on regardless.
TEST_F(ForkTest, UnderMemprofsSamplerAWorkerForkedDuringAWindowStopsWhenItEnds) {
  TargetProcess* parent = StartForking(false, "30s", "follow", {}, "prof:false");
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(AwaitWorker(*parent, 1).has_value());
  CommandResult status = Cli({"status", "--pid", std::to_string(parent->pid()), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status;
  ASSERT_EQ(ParseJsonOutput(status)["sampler"], "memprof") << status;
  auto worker = ForkDuringAWindow(*parent, "5s");
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(AskWorker(*parent, worker->pid, 1), std::optional<WorkerSampling>({false, true}))
      << "the worker samples in the window it was forked into";
  ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker->pid)); }, seconds(30)));
  ASSERT_TRUE(WaitUntil(
      [&] {
        CommandResult r = Cli({"status", "--pid", std::to_string(worker->pid), "--json"});
        return r.exit_code == 0 && ParseJsonOutput(r)["profiling_active"] == false;
      },
      seconds(30)));
  EXPECT_EQ(AskWorker(*parent, worker->pid, 2), std::optional<WorkerSampling>({false, false}))
      << "the worker's malloc is still intercepted after its window ended";
}

// The same with MEMPROF_FORK=off: a worker without an agent has nobody to end
// the window, so memprof's sampler stops intercepting in it at once; the
// parent's window goes on. The fork waits for gRPC to go, as above.
TEST_F(ForkTest, UnderMemprofsSamplerWithForkOffAWorkerForkedDuringAWindowIsNotIntercepted) {
  TargetProcess* parent = StartForking(false, "1s", "off", {}, "prof:false");
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(AwaitWorker(*parent, 1).has_value());
  auto worker = ForkDuringAWindow(*parent, "1h", true);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(AskWorker(*parent, worker->pid, 1), std::optional<WorkerSampling>({false, false}))
      << "a worker without an agent is intercepted with nobody to end it";
  CommandResult status = Cli({"status", "--pid", std::to_string(parent->pid()), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status;
  EXPECT_EQ(ParseJsonOutput(status)["sampler"], "memprof") << status;
  EXPECT_EQ(ParseJsonOutput(status)["profiling_active"], true) << "the parent's window goes on";
}

}  // namespace
}  // namespace memprof::integration
