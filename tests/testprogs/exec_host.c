// exec_host: a service that runs helper programs, as a build server runs
// compilers or a web server runs CGI scripts: fork() and exec() with the
// service's own environment (so LD_PRELOAD and the MEMPROF_* variables reach
// the helpers) and its own stdout/stderr (so whatever a helper or an agent in
// it writes lands in the service's output). Linked with jemalloc only; the
// tests preload the agent.
//
// Commands on stdin, one per line (arguments separated by single spaces):
//   run PROG ARGS...     fork+exec PROG and wait: "ran PID status CODE"
//   start PROG ARGS...   fork+exec PROG, do not wait: "started PID"
//   stop PID             SIGTERM a started helper and wait: "stopped PID status CODE"
//   exec PROG ARGS...    exec PROG in place (same pid)
//   exit                 return from main (exit handlers run)
//   _exit                _exit(0) (no exit handlers)
// CODE is the exit code, or 128 + the signal that killed the helper. The host
// writes nothing else, so the tests can tell every other byte apart.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testprogs/line_server.h"
#include "tests/testprogs/testprog_support.h"

enum { kLineBytes = 1024, kMaxArgs = 32, kBlockBytes = 8 * 1024 };

static void* g_block = NULL;

// Splits `line` in place at spaces into a NULL-terminated argv; returns argc.
static int SplitArgs(char* line, char** argv) {
  int argc = 0;
  for (char* tok = strtok(line, " "); tok != NULL && argc < kMaxArgs; tok = strtok(NULL, " ")) {
    argv[argc++] = tok;
  }
  argv[argc] = NULL;
  return argc;
}

// "VERB PID", or "VERB PID status CODE" with_code.
static void Say(const char* verb, pid_t pid, int with_code, int code) {
  char line[128];
  if (with_code) {
    snprintf(line, sizeof(line), "%s %d status %d\n", verb, (int)pid, code);
  } else {
    snprintf(line, sizeof(line), "%s %d\n", verb, (int)pid);
  }
  LineWrite(STDOUT_FILENO, line);
}

static int WaitCode(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static pid_t Spawn(char** argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], argv);
    fprintf(stderr, "exec_host: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  if (pid < 0) perror("exec_host: fork");
  return pid;
}

// Runs one command; returns 1 when the host should return from main.
static int RunCommand(char* line) {
  char* argv[kMaxArgs + 1];
  if (SplitArgs(line, argv) == 0) return 0;
  const char* cmd = argv[0];
  // A little work per command, so that jemalloc is in use as in a service.
  free(g_block);
  g_block = malloc(kBlockBytes);
  if (strcmp(cmd, "run") == 0 && argv[1] != NULL) {
    const pid_t pid = Spawn(argv + 1);
    if (pid > 0) Say("ran", pid, 1, WaitCode(pid));
  } else if (strcmp(cmd, "start") == 0 && argv[1] != NULL) {
    const pid_t pid = Spawn(argv + 1);
    if (pid > 0) Say("started", pid, 0, 0);
  } else if (strcmp(cmd, "stop") == 0 && argv[1] != NULL) {
    const pid_t pid = (pid_t)atoi(argv[1]);
    kill(pid, SIGTERM);
    Say("stopped", pid, 1, WaitCode(pid));
  } else if (strcmp(cmd, "exec") == 0 && argv[1] != NULL) {
    execv(argv[1], argv + 1);
    fprintf(stderr, "exec_host: exec %s: %s\n", argv[1], strerror(errno));
  } else if (strcmp(cmd, "exit") == 0) {
    return 1;
  } else if (strcmp(cmd, "_exit") == 0) {
    _exit(0);
  } else {
    fprintf(stderr, "exec_host: unknown command '%s'\n", cmd);
  }
  return 0;
}

int main(void) {
  if (TestProgInstallStopHandlers() != 0 || TestProgSignalReady("exec_host") != 0) return 1;
  // The handshake fd is spent: helpers and exec'd programs must not try it.
  unsetenv(MEMPROF_TEST_READY_FD_ENV);
  char line[kLineBytes];
  while (!TestProgStopRequested()) {
    int n = LineRead(STDIN_FILENO, line, sizeof(line));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (RunCommand(line)) break;
  }
  free(g_block);
  return 0;
}
