// forking_target: a pre-forking service in miniature, linked with jemalloc and
// libmemprof_agent.so. The parent starts its agent, forks one worker before it
// reports ready, and forks another each time it gets SIGUSR1. With
// --worker-agent every worker calls memprof_agent_start() right after fork(),
// as a service that wants its workers profiled does, and prints the result.
// Each worker prints "worker <pid> agent <rc>" on stdout (rc is "none" without
// --worker-agent). SIGTERM/SIGINT stops the parent, which stops its workers.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "memprof/agent.h"
#include "tests/testprogs/testprog_support.h"

namespace {

constexpr int kTickMillis = 20;
constexpr std::size_t kBlockBytes = 32 * 1024;
constexpr std::size_t kMaxWorkers = 16;

std::atomic<int> g_fork_requests{0};

void OnForkRequest(int) { g_fork_requests.fetch_add(1); }

// Allocates and frees steadily, keeping a little, until told to stop.
__attribute__((noinline)) void WorkerAllocate(std::vector<void*>& kept) {
  void* block = std::malloc(kBlockBytes);
  if (block == nullptr) return;
  std::memset(block, 0x3c, kBlockBytes);
  if (kept.size() < 256) {
    kept.push_back(block);
  } else {
    std::free(block);
  }
}

int WorkerMain(bool start_agent) {
  if (start_agent) {
    const int rc = memprof_agent_start();
    std::printf("worker %d agent %d\n", static_cast<int>(::getpid()), rc);
  } else {
    std::printf("worker %d agent none\n", static_cast<int>(::getpid()));
  }
  std::fflush(stdout);
  std::vector<void*> kept;
  kept.reserve(256);
  while (!TestProgStopRequested()) {
    WorkerAllocate(kept);
    TestProgSleepMillis(kTickMillis);
  }
  for (void* block : kept) std::free(block);
  memprof_agent_stop();
  return 0;
}

// Returns the worker's pid, or -1. In the child this never returns.
pid_t ForkWorker(bool start_agent) {
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid == 0) std::exit(WorkerMain(start_agent));
  if (pid < 0) std::perror("forking_target: fork");
  return pid;
}

void StopWorkers(const std::vector<pid_t>& workers) {
  for (pid_t pid : workers) ::kill(pid, SIGTERM);
  for (pid_t pid : workers) ::waitpid(pid, nullptr, 0);
}

bool InstallForkRequestHandler() {
  struct sigaction action {};
  action.sa_handler = OnForkRequest;
  sigemptyset(&action.sa_mask);
  return ::sigaction(SIGUSR1, &action, nullptr) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool worker_agent = argc == 2 && std::strcmp(argv[1], "--worker-agent") == 0;
  if (argc > 2 || (argc == 2 && !worker_agent)) {
    std::fprintf(stderr, "usage: forking_target [--worker-agent]\n");
    return 2;
  }
  if (TestProgInstallStopHandlers() != 0 || !InstallForkRequestHandler()) return 1;
  if (int rc = memprof_agent_start(); rc < 0) {
    std::fprintf(stderr, "forking_target: memprof_agent_start() failed (%d)\n", rc);
    return 1;
  }
  std::vector<pid_t> workers;
  if (pid_t pid = ForkWorker(worker_agent); pid > 0) workers.push_back(pid);
  if (workers.empty() || TestProgSignalReady("forking_target") != 0) return 1;
  while (!TestProgStopRequested()) {
    if (g_fork_requests.load() > 0 && workers.size() < kMaxWorkers) {
      g_fork_requests.fetch_sub(1);
      if (pid_t pid = ForkWorker(worker_agent); pid > 0) workers.push_back(pid);
    }
    TestProgSleepMillis(kTickMillis);
  }
  StopWorkers(workers);
  memprof_agent_stop();
  return 0;
}
