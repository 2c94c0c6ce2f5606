// lifecycle_target: linked with jemalloc and libmemprof_agent.so, for the
// agent lifecycle tests. It starts the agent, reports ready, then:
//   SIGUSR1  toggles the agent: memprof_agent_stop(), or memprof_agent_start()
//            again, printing "stopped" / "started <rc>" on stdout;
//   SIGUSR2  exec()s the rest of its command line (lifecycle_target PROG ARGS...),
//            keeping the environment (and so LD_PRELOAD).
// SIGTERM/SIGINT end it normally.
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memprof/agent.h"
#include "tests/testprogs/testprog_support.h"

enum { kTickMillis = 20, kBlockBytes = 16 * 1024 };

static atomic_int g_toggles = 0;
static atomic_int g_exec_requested = 0;
static void* g_block = NULL;

static void OnToggle(int signo) {
  (void)signo;
  atomic_fetch_add(&g_toggles, 1);
}

static void OnExec(int signo) {
  (void)signo;
  atomic_store(&g_exec_requested, 1);
}

static int Install(int signo, void (*handler)(int)) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  return sigaction(signo, &action, NULL);
}

static void Toggle(int* running) {
  if (*running) {
    memprof_agent_stop();
    printf("stopped\n");
  } else {
    printf("started %d\n", memprof_agent_start());
  }
  fflush(stdout);
  *running = !*running;
}

int main(int argc, char** argv) {
  if (TestProgInstallStopHandlers() != 0 || Install(SIGUSR1, OnToggle) != 0 ||
      Install(SIGUSR2, OnExec) != 0) {
    return 1;
  }
  if (memprof_agent_start() < 0) return 1;
  int running = 1;
  if (TestProgSignalReady("lifecycle_target") != 0) return 1;
  while (!TestProgStopRequested()) {
    for (; atomic_load(&g_toggles) > 0; atomic_fetch_sub(&g_toggles, 1)) Toggle(&running);
    if (atomic_load(&g_exec_requested) && argc > 1) {
      // The handshake fd is spent: the exec'd program must not try it again.
      unsetenv(MEMPROF_TEST_READY_FD_ENV);
      execv(argv[1], argv + 1);
      perror("lifecycle_target: execv");
      return 1;
    }
    // Allocates a little every tick, as a service does (and so that jemalloc,
    // not glibc, is this program's malloc).
    free(g_block);
    g_block = malloc(kBlockBytes);
    TestProgSleepMillis(kTickMillis);
  }
  memprof_agent_stop();
  return 0;
}
