// close_range_host: a daemon that closes every descriptor it inherited at
// start-up, as many do (close_range(3, ~0U, 0) or closefrom(3)), after the
// preloaded agent has opened its socket, and then opens its own sockets on the
// same numbers. Linked with jemalloc only; the tests preload the agent.
//
// It reports ready, then waits for one command on stdin:
//   go [N...]  close_range(3, ~0U, 0); open a loopback TCP listening socket and
//              a socketpair (the lowest free numbers, 3, 4 and 5); put a copy of
//              one of them on each number N (the numbers the test saw the agent
//              use) that is not taken yet, so that every one of those numbers is
//              the host's now, whatever numbers the agent picked; fork a child
//              that serves the same listening socket; print
//              "host fds 3 4 5 N... port P child C" on stdout.
// Then parent and child each serve the TCP socket, one request per connection:
//   echo TEXT  -> "PID TEXT"
//   check      -> "PID ok" when every descriptor the host opened is still open,
//                 is still the same object (the device and inode it had), and
//                 the socketpair carries a byte across with nothing else in
//                 it; otherwise "PID lost: <what>".
// SIGTERM/SIGINT: the parent stops its child and both exit 0.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testprogs/line_server.h"
#include "tests/testprogs/testprog_support.h"

enum { kMaxFds = 64, kLineBytes = 512, kKeptEchoes = 64, kPairProbeMillis = 1000 };

// A descriptor the host opened, and what it was then.
struct OwnedFd {
  int fd;
  dev_t dev;
  ino_t ino;
};

static struct OwnedFd g_owned[kMaxFds];
static int g_owned_count = 0;
static int g_pair[2] = {-1, -1};
static char* g_kept[kKeptEchoes];  // the last echoes: the host allocates as it serves
static unsigned g_kept_next = 0;
static unsigned char g_probe = 0;

static int Own(int fd) {
  struct stat st;
  if (fd < 0 || g_owned_count == kMaxFds || fstat(fd, &st) != 0) return -1;
  g_owned[g_owned_count++] = (struct OwnedFd){fd, st.st_dev, st.st_ino};
  return 0;
}

static int Owns(int fd) {
  for (int i = 0; i < g_owned_count; ++i) {
    if (g_owned[i].fd == fd) return 1;
  }
  return 0;
}

// The libc wrapper arrived with glibc 2.34; the system call works everywhere
// since Linux 5.9.
static int CloseRange(unsigned first, unsigned last) {
  return (int)syscall(SYS_close_range, first, last, 0u);
}

// Parses "go N..." into the numbers; -1 if it is not a go command.
static int ParseGo(char* line, int* numbers, int max) {
  if (strncmp(line, "go", 2) != 0 || (line[2] != '\0' && line[2] != ' ')) return -1;
  int count = 0;
  for (char* tok = strtok(line + 2, " "); tok != NULL && count < max; tok = strtok(NULL, " ")) {
    numbers[count++] = atoi(tok);
  }
  return count;
}

// The host's own descriptors after the purge; returns the listening socket.
static int OpenOwnSockets(const int* numbers, int count, unsigned short* port) {
  int listen_fd = LineServerListen(port);
  if (listen_fd < 0 || Own(listen_fd) != 0) return -1;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, g_pair) != 0 || Own(g_pair[0]) != 0 ||
      Own(g_pair[1]) != 0) {
    perror("close_range_host: socketpair");
    return -1;
  }
  for (int i = 0; i < count; ++i) {
    if (numbers[i] < 3 || Owns(numbers[i])) continue;
    // Alternate a listening socket and a socketpair end: an agent that still
    // polls, accepts on or writes to its old number hits either.
    int source = i % 2 == 0 ? listen_fd : g_pair[0];
    if (dup2(source, numbers[i]) != numbers[i] || Own(numbers[i]) != 0) {
      fprintf(stderr, "close_range_host: dup2 onto %d: %s\n", numbers[i], strerror(errno));
      return -1;
    }
  }
  return listen_fd;
}

static void Report(unsigned short port, pid_t child) {
  char line[kLineBytes] = "host fds";
  size_t len = strlen(line);
  for (int i = 0; i < g_owned_count; ++i) {
    len += (size_t)snprintf(line + len, sizeof(line) - len, " %d", g_owned[i].fd);
  }
  snprintf(line + len, sizeof(line) - len, " port %u child %d\n", port, (int)child);
  LineWrite(STDOUT_FILENO, line);
}

// Sends one byte through the socketpair and reads it back at the other end.
static const char* ProbePair(void) {
  unsigned char out = ++g_probe, in = 0;
  if (send(g_pair[0], &out, 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1) return "socketpair send failed";
  struct pollfd pfd = {g_pair[1], POLLIN, 0};
  if (poll(&pfd, 1, kPairProbeMillis) != 1 || recv(g_pair[1], &in, 1, MSG_DONTWAIT) != 1) {
    return "socketpair carried nothing";
  }
  if (in != out) return "socketpair carried a byte the host never sent";
  if (recv(g_pair[1], &in, 1, MSG_DONTWAIT) == 1)
    return "socketpair holds bytes the host never sent";
  return NULL;
}

static void Check(char* reply, size_t size) {
  size_t len = (size_t)snprintf(reply, size, "%d", (int)getpid());
  int lost = 0;
  for (int i = 0; i < g_owned_count && len < size; ++i) {
    struct stat st;
    const struct OwnedFd* o = &g_owned[i];
    const char* what = fstat(o->fd, &st) != 0                         ? "closed"
                       : (st.st_dev != o->dev || st.st_ino != o->ino) ? "replaced"
                                                                      : NULL;
    if (what == NULL) continue;
    char link[64] = "?", now[128] = "";
    snprintf(link, sizeof(link), "/proc/self/fd/%d", o->fd);
    ssize_t n = readlink(link, now, sizeof(now) - 1);
    now[n > 0 ? n : 0] = '\0';
    len += (size_t)snprintf(reply + len, size - len, "%s fd %d %s (now %s)", lost++ ? "," : " lost:",
                            o->fd, what, now);
  }
  if (lost == 0) {
    const char* pair = ProbePair();
    snprintf(reply + len, size - len, pair == NULL ? " ok" : " lost: %s", pair);
  }
}

static void Handle(const char* request, char* reply, size_t size) {
  if (strcmp(request, "check") == 0) {
    Check(reply, size);
  } else if (strncmp(request, "echo ", 5) == 0) {
    free(g_kept[g_kept_next]);
    g_kept[g_kept_next] = strdup(request + 5);
    g_kept_next = (g_kept_next + 1) % kKeptEchoes;
    snprintf(reply, size, "%d %s", (int)getpid(), request + 5);
  } else {
    snprintf(reply, size, "%d unknown request", (int)getpid());
  }
}

static void Serve(int listen_fd) {
  while (!TestProgStopRequested()) {
    if (LineServeOne(listen_fd, Handle) != 0 && errno != EINTR) {
      fprintf(stderr, "close_range_host %d: accept: %s\n", (int)getpid(), strerror(errno));
      return;
    }
  }
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0 || TestProgSignalReady("close_range_host") != 0) return 1;
  char line[kLineBytes];
  int numbers[kMaxFds];
  int count = -1;
  while (count < 0) {
    int n = LineRead(STDIN_FILENO, line, sizeof(line));
    if (n < 0 && errno == EINTR && !TestProgStopRequested()) continue;
    if (n <= 0) return TestProgStopRequested() ? 0 : 1;
    count = ParseGo(line, numbers, kMaxFds);
  }
  if (CloseRange(3, ~0U) != 0) {
    perror("close_range_host: close_range");
    return 1;
  }
  unsigned short port = 0;
  const int listen_fd = OpenOwnSockets(numbers, count, &port);
  if (listen_fd < 0) return 1;
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    perror("close_range_host: fork");
    return 1;
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 0;
    Serve(listen_fd);
    return 0;
  }
  Report(port, child);
  Serve(listen_fd);
  kill(child, SIGTERM);
  waitpid(child, NULL, 0);
  return 0;
}
