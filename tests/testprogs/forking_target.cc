// forking_target: a pre-forking service in miniature, linked with jemalloc and
// libmemprof_agent.so. The parent starts its agent, forks one worker before it
// reports ready, and forks another each time it gets SIGUSR1. With
// --worker-agent every worker calls memprof_agent_start() right after fork(),
// as a service that wants its workers profiled does, and prints the result.
// Each worker prints "worker <pid> agent <rc>" on stdout (rc is "none" without
// --worker-agent). SIGTERM/SIGINT stops the parent, which stops its workers.
// With --worker-closes-fds every worker first closes descriptors 3 to 255, as
// a Varnish cache child does (the agent's own sit higher), and opens an epoll
// set of its own on the freed numbers, watching a pipe nobody writes to: an
// event from it means someone else used the worker's epoll set, and the
// worker says so ("worker <pid> epoll: foreign event") and exits 3. With
// --worker-closes-all-fds it closes every descriptor from 3 up
// (close_range(3, ~0U)) instead, the agent's included. A worker that gets
// SIGUSR2 prints "worker <pid> prof.active <0|1> hooked <0|1>": jemalloc's
// setting in it, and whether memprof's own sampler intercepts its malloc (the
// target started without prof:true samples through memprof's sampler).
#include <dlfcn.h>
#include <jemalloc/jemalloc.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
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
std::atomic<bool> g_report_requested{false};

void OnForkRequest(int) { g_fork_requests.fetch_add(1); }
void OnReportRequest(int) { g_report_requested.store(true); }

// Whether memprof's sampler intercepts this process's malloc: the address of
// malloc, loaded from the executable's GOT at run time (a PIE takes it from
// there), is then the sampler's hook, not the allocator's own malloc.
bool MallocHooked() {
  void* (*volatile through_got)(size_t) = &std::malloc;
  return reinterpret_cast<void*>(through_got) != ::dlsym(RTLD_DEFAULT, "malloc");
}

// "worker <pid> prof.active <0|1> hooked <0|1>": whether jemalloc samples in
// this worker, and whether memprof's sampler does.
void ReportProfActive() {
  bool active = false;
  size_t size = sizeof(active);
  if (mallctl("prof.active", &active, &size, nullptr, 0) != 0) active = false;
  std::printf("worker %d prof.active %d hooked %d\n", static_cast<int>(::getpid()), active ? 1 : 0,
              MallocHooked() ? 1 : 0);
  std::fflush(stdout);
}

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

constexpr uint64_t kOwnEpollData = 0xC0FFEE;

enum class CloseFds { kNone, kLow, kAll };

// Closes 3..255 (or everything from 3), then watches a silent pipe with an
// epoll set of its own.
int CloseFdsAndWatch(CloseFds which) {
  if (which == CloseFds::kAll) {
    ::syscall(SYS_close_range, 3u, ~0u, 0u);
  } else {
    for (int fd = 3; fd < 256; ++fd) ::close(fd);
  }
  int pipe_fds[2];
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0 || ::pipe(pipe_fds) != 0) return -1;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kOwnEpollData;
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pipe_fds[0], &ev) != 0) return -1;
  return epoll_fd;
}

// Nobody writes the pipe: any event is from something someone else added.
bool EpollStillOwn(int epoll_fd) {
  epoll_event events[8];
  return ::epoll_wait(epoll_fd, events, 8, 0) <= 0;
}

int WorkerMain(bool start_agent, CloseFds close_fds) {
  const int epoll_fd = close_fds != CloseFds::kNone ? CloseFdsAndWatch(close_fds) : -1;
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
    if (g_report_requested.exchange(false)) ReportProfActive();
    WorkerAllocate(kept);
    if (epoll_fd >= 0 && !EpollStillOwn(epoll_fd)) {
      std::printf("worker %d epoll: foreign event\n", static_cast<int>(::getpid()));
      std::fflush(stdout);
      return 3;
    }
    TestProgSleepMillis(kTickMillis);
  }
  for (void* block : kept) std::free(block);
  memprof_agent_stop();
  return 0;
}

// Returns the worker's pid, or -1. In the child this never returns.
pid_t ForkWorker(bool start_agent, CloseFds close_fds) {
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid == 0) std::exit(WorkerMain(start_agent, close_fds));
  if (pid < 0) std::perror("forking_target: fork");
  return pid;
}

void StopWorkers(const std::vector<pid_t>& workers) {
  for (pid_t pid : workers) ::kill(pid, SIGTERM);
  for (pid_t pid : workers) ::waitpid(pid, nullptr, 0);
}

bool InstallSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnForkRequest;
  sigemptyset(&action.sa_mask);
  struct sigaction report = action;
  report.sa_handler = OnReportRequest;
  return ::sigaction(SIGUSR1, &action, nullptr) == 0 &&
         ::sigaction(SIGUSR2, &report, nullptr) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool worker_agent = false;
  CloseFds close_fds = CloseFds::kNone;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--worker-agent") == 0) {
      worker_agent = true;
    } else if (std::strcmp(argv[i], "--worker-closes-fds") == 0) {
      close_fds = CloseFds::kLow;
    } else if (std::strcmp(argv[i], "--worker-closes-all-fds") == 0) {
      close_fds = CloseFds::kAll;
    } else {
      std::fprintf(stderr,
                   "usage: forking_target [--worker-agent] "
                   "[--worker-closes-fds | --worker-closes-all-fds]\n");
      return 2;
    }
  }
  if (TestProgInstallStopHandlers() != 0 || !InstallSignalHandlers()) return 1;
  if (int rc = memprof_agent_start(); rc < 0) {
    std::fprintf(stderr, "forking_target: memprof_agent_start() failed (%d)\n", rc);
    return 1;
  }
  std::vector<pid_t> workers;
  if (pid_t pid = ForkWorker(worker_agent, close_fds); pid > 0) workers.push_back(pid);
  if (workers.empty() || TestProgSignalReady("forking_target") != 0) return 1;
  while (!TestProgStopRequested()) {
    if (g_fork_requests.load() > 0 && workers.size() < kMaxWorkers) {
      g_fork_requests.fetch_sub(1);
      if (pid_t pid = ForkWorker(worker_agent, close_fds); pid > 0) workers.push_back(pid);
    }
    TestProgSleepMillis(kTickMillis);
  }
  StopWorkers(workers);
  memprof_agent_stop();
  return 0;
}
