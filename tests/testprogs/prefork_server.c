// prefork_server: a pre-forking server in miniature, the shape of a
// pre-forking HTTP cache. The master opens a loopback TCP listening socket and
// forks workers that never exec; the workers accept and serve the requests, and
// each request allocates memory that the worker keeps (WorkerCacheRequest), so
// the memory is in the workers, not in the master. Linked with jemalloc only;
// the tests preload the agent.
//
//   prefork_server [--workers N]     (N workers at start-up, default 4)
//
// stdout: "port P", then "worker PID" once per worker, as it starts.
// stdin (optional), one command per line:
//   fork N    forks N more workers.
// A request is one line per connection: "req" -> "PID ok" (PID: the worker).
// SIGTERM/SIGINT: the master stops its workers, waits for them and exits 0; a
// worker leaves its loop and returns from main (exit handlers run).
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testprogs/line_server.h"
#include "tests/testprogs/testprog_support.h"

enum {
  kDefaultWorkers = 4,
  kMaxWorkers = 32,
  kEntryBytes = 64 * 1024,
  kCacheSlots = 128,  // 8 MiB kept per worker at most
  kLineBytes = 128,
  kIdleMillis = 100,
};

static pid_t g_workers[kMaxWorkers];
static int g_worker_count = 0;
static void* g_cache[kCacheSlots];
static unsigned g_cache_next = 0;

// The worker's per-request allocation, kept in a bounded cache: the function
// the tests look for in each worker's heap profile.
__attribute__((noinline)) static int WorkerCacheRequest(const char* request) {
  char* entry = malloc(kEntryBytes);
  if (entry == NULL) return -1;
  memset(entry, 0x6b, kEntryBytes);
  strncpy(entry, request, kEntryBytes - 1);
  free(g_cache[g_cache_next]);
  g_cache[g_cache_next] = entry;
  g_cache_next = (g_cache_next + 1) % kCacheSlots;
  return 0;
}

static void HandleRequest(const char* request, char* reply, size_t size) {
  const int ok = strcmp(request, "req") == 0 && WorkerCacheRequest(request) == 0;
  snprintf(reply, size, "%d %s", (int)getpid(), ok ? "ok" : "error");
}

static int WorkerMain(int listen_fd, pid_t master) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != master) return 0;
  char line[kLineBytes];
  snprintf(line, sizeof(line), "worker %d\n", (int)getpid());
  LineWrite(STDOUT_FILENO, line);
  while (!TestProgStopRequested()) {
    if (LineServeOne(listen_fd, HandleRequest) != 0 && errno != EINTR) {
      fprintf(stderr, "prefork_server worker %d: accept: %s\n", (int)getpid(), strerror(errno));
      return 1;
    }
  }
  for (int i = 0; i < kCacheSlots; ++i) free(g_cache[i]);
  return 0;
}

// Forks a worker; in the child this never returns. `ready_fd`: the readiness
// pipe while it is still open (a worker must not hold it), else -1.
static int ForkWorker(int listen_fd, int ready_fd) {
  if (g_worker_count == kMaxWorkers) return -1;
  const pid_t master = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    perror("prefork_server: fork");
    return -1;
  }
  if (pid == 0) {
    if (ready_fd >= 0) close(ready_fd);
    exit(WorkerMain(listen_fd, master));
  }
  g_workers[g_worker_count++] = pid;
  return 0;
}

static int ReadyFd(void) {
  const char* text = getenv(MEMPROF_TEST_READY_FD_ENV);
  return text != NULL ? atoi(text) : -1;
}

// Serves "fork N" commands from stdin until it ends, then waits for a stop.
static void MasterLoop(int listen_fd) {
  char line[kLineBytes];
  int stdin_open = 1;
  while (!TestProgStopRequested()) {
    if (!stdin_open) {
      TestProgSleepMillis(kIdleMillis);
      continue;
    }
    int n = LineRead(STDIN_FILENO, line, sizeof(line));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      stdin_open = 0;
      continue;
    }
    int count = 0;
    if (sscanf(line, "fork %d", &count) != 1) {
      fprintf(stderr, "prefork_server: unknown command '%s'\n", line);
      continue;
    }
    for (int i = 0; i < count; ++i) ForkWorker(listen_fd, -1);
  }
}

int main(int argc, char** argv) {
  int workers = kDefaultWorkers;
  if (argc == 3 && strcmp(argv[1], "--workers") == 0) {
    workers = atoi(argv[2]);
  } else if (argc != 1) {
    fprintf(stderr, "usage: prefork_server [--workers N]\n");
    return 2;
  }
  if (TestProgInstallStopHandlers() != 0) return 1;
  unsigned short port = 0;
  const int listen_fd = LineServerListen(&port);
  if (listen_fd < 0) return 1;
  char line[kLineBytes];
  snprintf(line, sizeof(line), "port %u\n", port);
  LineWrite(STDOUT_FILENO, line);
  for (int i = 0; i < workers; ++i) {
    if (ForkWorker(listen_fd, ReadyFd()) != 0) return 1;
  }
  if (TestProgSignalReady("prefork_server") != 0) return 1;
  MasterLoop(listen_fd);
  for (int i = 0; i < g_worker_count; ++i) kill(g_workers[i], SIGTERM);
  for (int i = 0; i < g_worker_count; ++i) waitpid(g_workers[i], NULL, 0);
  return 0;
}
