// A pre-forking server (tests/testprogs/prefork_server.c): the master forks
// workers that never exec, and the workers carry the traffic and hold the
// memory. With MEMPROF_FORK=follow (the default) each worker gets an agent of
// its own at <workerpid>.sock, also when a client was talking to the master's
// agent at the moment of fork(); `list` shows each worker with the master as
// its ppid; each worker is profiled while it serves; the service never
// notices (docs/contract.md rules 7 and 9).
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/harness/guest_fixture.h"
#include "tests/integration/harness/raw_http2.h"
#include "tests/integration/harness/test_binaries.h"
#include "tests/support/wait_until.h"

namespace memprof::integration {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kWorkers = 4;
constexpr char kWorkerFunction[] = "WorkerCacheRequest";
const std::regex kPortLine(R"(port (\d+)\n)");
const std::regex kWorkerLine(R"(worker (\d+)\n)");

// A client thread that sends requests to the server for as long as it runs,
// a few hundred a second, and counts what came back.
class LoadGenerator {
 public:
  explicit LoadGenerator(uint16_t port) : port_(port), thread_([this] { Run(); }) {}
  ~LoadGenerator() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int ok() const { return ok_; }
  int errors() const { return errors_; }
  std::string first_error() const {
    std::lock_guard lock(mu_);
    return first_error_;
  }
  std::map<pid_t, int> served() const {
    std::lock_guard lock(mu_);
    return served_;
  }

 private:
  void Run() {
    while (!stop_) {
      auto reply = TcpRequest(port_, "req", seconds(10));
      const size_t space = reply ? reply->find(' ') : std::string::npos;
      std::lock_guard lock(mu_);
      if (reply && space != std::string::npos && reply->substr(space) == " ok") {
        ++ok_;
        ++served_[std::atoi(reply->substr(0, space).c_str())];
      } else {
        if (errors_++ == 0) first_error_ = reply ? "reply '" + *reply + "'" : reply.error().message;
      }
      // Pacing, not waiting for anything: a steady load that leaves the
      // other core to the workers and the CLI.
      std::this_thread::sleep_for(milliseconds(2));
    }
  }

  const uint16_t port_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ok_{0};
  std::atomic<int> errors_{0};
  mutable std::mutex mu_;
  std::string first_error_;
  std::map<pid_t, int> served_;
  std::thread thread_;
};

class PreforkTest : public GuestTest {
 protected:
  // The master with `workers` workers forked before it reports ready.
  TargetProcess* StartMaster(int workers, std::map<std::string, std::string> env = {}) {
    TargetOptions options;
    options.argv = {kPreforkServer, "--workers", std::to_string(workers)};
    options.env = std::move(env);
    options.env["LD_PRELOAD"] = kAgentPreload;
    options.env["MALLOC_CONF"] = kProfilingReadyConf;
    options.stdin_pipe = true;
    master_ = Start(options);
    if (master_ == nullptr) return nullptr;
    auto port = AwaitStdout(*master_, kPortLine);
    if (port.empty()) return nullptr;
    port_ = static_cast<uint16_t>(std::stoi(port[0][0]));
    return master_;
  }

  // The first `count` workers the master announced (a failure if fewer come).
  std::vector<pid_t> AwaitWorkers(size_t count) {
    std::vector<pid_t> out;
    for (const auto& groups : AwaitStdout(*master_, kWorkerLine, count)) {
      out.push_back(std::stoi(groups[0]));
    }
    if (out.size() > count) out.resize(count);
    return out;
  }

  std::string MasterOutput() const {
    return "\n--- master stdout ---\n" + master_->process().StdoutText() +
           "\n--- master stderr ---\n" + master_->process().StderrText();
  }

  // Each worker publishes its own socket (about 200 ms after fork) and is
  // served there; `list` shows the master and the workers, each worker with
  // the master as its parent.
  void ExpectWorkersListed(const std::vector<pid_t>& workers) {
    for (pid_t worker : workers) {
      ASSERT_TRUE(WaitUntil([&] { return SocketAccepts(SocketOf(worker)); }, seconds(10)))
          << "worker " << worker << " never served " << SocketOf(worker)
          << "; sockets: " << ::testing::PrintToString(SocketNames()) << MasterOutput();
      ExpectServed(worker);
    }
    const nlohmann::json targets = ListTargets();
    std::vector<pid_t> expected = workers;
    expected.push_back(master_->pid());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(ListedPids(targets), expected) << targets.dump(2);
    for (pid_t worker : workers) {
      auto entry = FindTarget(targets, worker);
      ASSERT_TRUE(entry.has_value()) << targets.dump(2);
      EXPECT_EQ(Field(*entry, "ppid"), master_->pid()) << entry->dump(2);
    }
    auto master = FindTarget(targets, master_->pid());
    ASSERT_TRUE(master.has_value()) << targets.dump(2);
    EXPECT_EQ(Field(*master, "ppid"), ::getpid()) << master->dump(2);
  }

  // Activates each worker and dumps it until its report names the worker's
  // per-request allocation.
  void ExpectEachWorkerProfiled(const std::vector<pid_t>& workers) {
    for (pid_t worker : workers) {
      CommandResult activate = Cli({"activate", "--pid", std::to_string(worker)});
      ASSERT_EQ(activate.exit_code, 0) << activate << MasterOutput();
      const std::string report = DumpUntilReportNames(worker, kWorkerFunction);
      EXPECT_NE(report.find(kWorkerFunction), std::string::npos) << "worker " << worker << ":\n"
                                                                 << report;
    }
  }

  void ExpectLoadServed(LoadGenerator& load, const std::vector<pid_t>& workers) {
    load.Stop();
    EXPECT_EQ(load.errors(), 0) << "first error: " << load.first_error() << MasterOutput();
    EXPECT_GT(load.ok(), 0);
    const std::map<pid_t, int> served = load.served();
    for (pid_t worker : workers) {
      EXPECT_GT(served.count(worker) ? served.at(worker) : 0, 0)
          << "worker " << worker << " served nothing";
    }
  }

  // The master stops its workers; every process exits normally and removes
  // its own socket: nothing stale is left.
  void ExpectCleanExit() {
    std::optional<ExitStatus> exit = master_->Terminate();
    ASSERT_TRUE(exit.has_value()) << "no exit within 20 s of SIGTERM" << MasterOutput();
    EXPECT_EQ(exit->ShellCode(), 0) << "(128 + signal when killed)" << MasterOutput();
    EXPECT_TRUE(WaitUntil([&] { return SocketNames().empty(); }, seconds(10)))
        << ::testing::PrintToString(SocketNames());
    EXPECT_EQ(ListTargets(), nlohmann::json::array());
  }

  TargetProcess* master_ = nullptr;
  uint16_t port_ = 0;
};

TEST_F(PreforkTest, EveryWorkerIsListedAndProfiledWhileServing) {
  ASSERT_NE(StartMaster(kWorkers), nullptr);
  const std::vector<pid_t> workers = AwaitWorkers(kWorkers);
  ASSERT_EQ(workers.size(), static_cast<size_t>(kWorkers));
  LoadGenerator load(port_);
  ASSERT_NO_FATAL_FAILURE(ExpectWorkersListed(workers));
  ASSERT_NO_FATAL_FAILURE(ExpectEachWorkerProfiled(workers));
  ExpectLoadServed(load, workers);
  ExpectCleanExit();
}

// gRPC does not survive fork(): the master's agent stops its gRPC before
// the fork (cancelling the call in flight), and each worker starts its own
// with private copies of what gRPC keeps open (agent/service/grpc_fork_repair.h).
TEST_F(PreforkTest, WorkersForkedWhileAClientTalksToTheMastersAgentGetAgentsToo) {
  ASSERT_NE(StartMaster(0), nullptr);
  // A gRPC call in flight on the master's agent: connection preface, and a
  // Status call opened but its request never sent, so the call stays open.
  Fd held = ConnectRaw(master_->socket_path());
  ASSERT_TRUE(held.valid());
  ASSERT_TRUE(SendAll(held.get(),
                      Http2ClientStart() + GrpcCallHeaders(1, "/memprof.v1.MemoryProfile/Status")));
  // The agent's server answers with its SETTINGS: the connection is served.
  pollfd pfd{held.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 10000), 1) << "the master's agent never answered" << MasterOutput();
  ASSERT_TRUE(master_->process().WriteStdin("fork " + std::to_string(kWorkers) + "\n"));
  const std::vector<pid_t> workers = AwaitWorkers(kWorkers);
  ASSERT_EQ(workers.size(), static_cast<size_t>(kWorkers));
  LoadGenerator load(port_);
  ASSERT_NO_FATAL_FAILURE(ExpectWorkersListed(workers));
  for (pid_t worker : workers) {
    const std::string out = dir().File(std::to_string(worker) + ".heap");
    CommandResult dump = Cli({"dump", "--pid", std::to_string(worker), "--out", out});
    ASSERT_EQ(dump.exit_code, 0) << dump << MasterOutput();
    EXPECT_EQ(ReadFile(out).rfind("heap_v2/", 0), 0u);
    ::unlink(out.c_str());
  }
  // The master's own agent still answers.
  ExpectServed(master_->pid());
  held.Reset();
  ExpectLoadServed(load, workers);
  ExpectCleanExit();
}

TEST_F(PreforkTest, WithForkOffWorkersGetNoAgent) {
  ASSERT_NE(StartMaster(2, {{"MEMPROF_FORK", "off"}}), nullptr);
  const std::vector<pid_t> workers = AwaitWorkers(2);
  ASSERT_EQ(workers.size(), 2u);
  // A worker would have published its socket by now (about 200 ms after
  // fork) if it had an agent; give it a generous moment, polling.
  EXPECT_FALSE(WaitUntil(
      [&] { return FileExists(SocketOf(workers[0])) || FileExists(SocketOf(workers[1])); },
      milliseconds(1500)));
  EXPECT_EQ(SocketNames(), std::vector<std::string>{SocketName(master_->pid())});
  EXPECT_EQ(ListedPids(ListTargets()), std::vector<pid_t>{master_->pid()});
  ExpectServed(master_->pid());
  auto reply = TcpRequest(port_, "req", seconds(10));
  ASSERT_TRUE(reply.has_value()) << reply.error().message;
  EXPECT_TRUE(reply->ends_with(" ok")) << *reply;
  ExpectCleanExit();
}

}  // namespace
}  // namespace memprof::integration
