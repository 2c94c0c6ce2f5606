// user_switching_host: a service that changes its user while it runs, the
// way varnishd does. Its manager, started as root, runs as the service user
// and turns back into root only for moments (setresuid(-1, uid, -1) and back,
// which glibc applies to every thread, the agent's too); its worker drops
// root for good. Linked with jemalloc only; the tests preload the agent.
//
//   user_switching_host UID GID
//
// Reports ready, then reads commands on stdin:
//   go     close_range(3, ~0U, 0), as daemons do at start-up; start a thread
//          that switches the effective user and group to UID/GID and back to
//          root, over and over; fork a worker that closes everything too,
//          drops to UID/GID for good (setgroups, setgid, setuid) and keeps
//          renewing a cache (WorkerKeepsCache); print "worker W".
//   purge  close_range(3, ~0U, 0) again; print "purged".
//   drop   (instead of go) drop root for good in this process, as named does
//          after start-up (setgroups, setgid, setuid to UID/GID): its agent,
//          which published its socket as root, hands it over to UID/GID;
//          print "dropped".
//   count  print "switches N failures F" (F: switches the kernel refused).
// SIGTERM/SIGINT: stop switching, leaving the process as UID/GID (as
// varnishd's manager runs), stop the worker and return from main, so the
// agent removes its socket while the process is not root.
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/testprogs/line_server.h"
#include "tests/testprogs/testprog_support.h"

enum {
  kLineBytes = 256,
  kCacheBlocks = 512,
  kCacheBlockBytes = 4096,
  kRootMicros = 200,
  kChurnMillis = 5,
  kPollMillis = 100
};

static uid_t g_uid;
static gid_t g_gid;
static atomic_long g_switches;
static atomic_long g_failures;
static atomic_int g_switching = 1;
static atomic_int g_switcher_started;
static void* volatile g_cache[kCacheBlocks];

static int CloseAll(void) { return (int)syscall(SYS_close_range, 3u, ~0u, 0u); }

static void Note(int ok) {
  atomic_fetch_add(ok ? &g_switches : &g_failures, 1);
}

static void SleepMicros(long micros) {
  struct timespec ts = {0, micros * 1000};
  nanosleep(&ts, NULL);
}

// As the service user most of the time, root for a moment now and then.
static void* Switch(void* unused) {
  (void)unused;
  atomic_store(&g_switcher_started, 1);
  while (atomic_load(&g_switching)) {
    Note(setresgid(-1, g_gid, -1) == 0 && setresuid(-1, g_uid, -1) == 0);
    SleepMicros(kRootMicros * 3);
    Note(setresuid(-1, 0, -1) == 0 && setresgid(-1, 0, -1) == 0);
    SleepMicros(kRootMicros);
  }
  Note(setresgid(-1, g_gid, -1) == 0 && setresuid(-1, g_uid, -1) == 0);
  return NULL;
}

// Replaces one block of the worker's cache, so that an activated profile
// soon holds samples of it.
__attribute__((noinline)) static void WorkerKeepsCache(unsigned i) {
  free(g_cache[i % kCacheBlocks]);
  g_cache[i % kCacheBlocks] = malloc(kCacheBlockBytes);
  memset(g_cache[i % kCacheBlocks], (int)i, kCacheBlockBytes);
}

static int RunWorker(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent || CloseAll() != 0) return 1;
  // Root again first (the fork may have come while the manager was not),
  // then the service user for good.
  if (setresuid(-1, 0, -1) != 0 || setgroups(1, &g_gid) != 0 || setgid(g_gid) != 0 ||
      setuid(g_uid) != 0) {
    perror("user_switching_host worker: dropping root");
    return 1;
  }
  for (unsigned i = 0; !TestProgStopRequested(); ++i) {
    WorkerKeepsCache(i);
    TestProgSleepMillis(kChurnMillis);
  }
  return 0;
}

static void Print(const char* text) { LineWrite(STDOUT_FILENO, text); }

// Every thread, the agent's too (glibc applies setuid to all of them).
static int DropForGood(void) {
  return setgroups(1, &g_gid) == 0 && setgid(g_gid) == 0 && setuid(g_uid) == 0 ? 0 : -1;
}

// The switching thread takes no signal: SIGTERM must interrupt the main
// thread's read(). Returns once the thread runs, so that the fork that
// follows never comes while it is still being set up: a thread's start-up
// allocates, and an allocator that does not hold its locks across fork
// (AddressSanitizer's in GCC 12 and clang 14) would leave the worker a lock
// that nobody releases (docs/reliability.md, "Not covered").
static int StartSwitching(pthread_t* switcher) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int r = pthread_create(switcher, NULL, Switch, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  while (r == 0 && !atomic_load(&g_switcher_started)) SleepMicros(kRootMicros);
  return r;
}

// Serves stdin commands until stop or EOF; 0 or 1 as main's status.
static int Serve(pid_t* worker, pthread_t* switcher) {
  char line[kLineBytes];
  for (;;) {
    // SIGTERM may come between two reads: look at the flag now and then.
    struct pollfd in = {STDIN_FILENO, POLLIN, 0};
    if (poll(&in, 1, kPollMillis) == 0 || (in.revents == 0 && errno == EINTR)) {
      if (TestProgStopRequested()) return 0;
      continue;
    }
    int n = LineRead(STDIN_FILENO, line, sizeof(line));
    if (n < 0 && errno == EINTR && !TestProgStopRequested()) continue;
    if (n <= 0) return TestProgStopRequested() ? 0 : 1;
    char reply[kLineBytes];
    if (strcmp(line, "go") == 0 && *worker == 0) {
      if (CloseAll() != 0 || StartSwitching(switcher) != 0) return 1;
      const pid_t parent = getpid();
      *worker = fork();
      if (*worker < 0) return 1;
      if (*worker == 0) exit(RunWorker(parent));
      snprintf(reply, sizeof(reply), "worker %d\n", (int)*worker);
    } else if (strcmp(line, "drop") == 0 && *worker == 0) {
      if (DropForGood() != 0) return 1;
      snprintf(reply, sizeof(reply), "dropped\n");
    } else if (strcmp(line, "purge") == 0) {
      if (CloseAll() != 0) return 1;
      snprintf(reply, sizeof(reply), "purged\n");
    } else if (strcmp(line, "count") == 0) {
      snprintf(reply, sizeof(reply), "switches %ld failures %ld\n", atomic_load(&g_switches),
               atomic_load(&g_failures));
    } else {
      snprintf(reply, sizeof(reply), "unknown command\n");
    }
    Print(reply);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: user_switching_host UID GID\n");
    return 2;
  }
  g_uid = (uid_t)strtoul(argv[1], NULL, 10);
  g_gid = (gid_t)strtoul(argv[2], NULL, 10);
  if (TestProgInstallStopHandlers() != 0 || TestProgSignalReady("user_switching_host") != 0) {
    return 1;
  }
  pid_t worker = 0;
  pthread_t switcher;
  const int status = Serve(&worker, &switcher);
  if (worker > 0) {
    atomic_store(&g_switching, 0);
    pthread_join(switcher, NULL);
    kill(worker, SIGTERM);
    waitpid(worker, NULL, 0);
  }
  return status;
}
