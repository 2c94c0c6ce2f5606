#include "tests/testprogs/testprog_support.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// A lock-free atomic may be written from a signal handler (C11 7.14.1.1) and
// read from any thread, unlike a plain volatile sig_atomic_t.
static atomic_int g_stop_requested = 0;

static void OnStopSignal(int signo) {
  (void)signo;
  atomic_store(&g_stop_requested, 1);
}

int TestProgInstallStopHandlers(void) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a pending sleep returns at once and the loop sees the flag.
  if (sigaction(SIGTERM, &action, NULL) != 0 || sigaction(SIGINT, &action, NULL) != 0) {
    fprintf(stderr, "sigaction: %s\n", strerror(errno));
    return -1;
  }
  return 0;
}

int TestProgStopRequested(void) { return atomic_load(&g_stop_requested); }

void TestProgSleepMillis(int millis) {
  struct timespec delay;
  delay.tv_sec = millis / 1000;
  delay.tv_nsec = (long)(millis % 1000) * 1000000L;
  nanosleep(&delay, NULL);  // EINTR is the point: it means a stop signal.
}

static int ParseFd(const char* text, int* fd) {
  char* end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0 || value > INT_MAX) return -1;
  *fd = (int)value;
  return 0;
}

int TestProgWriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t written = write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return -1;
    data += written;
    size -= (size_t)written;
  }
  return 0;
}

int TestProgSignalReady(const char* program_name) {
  const char* text = getenv(MEMPROF_TEST_READY_FD_ENV);
  if (text == NULL) return 0;
  int fd = -1;
  if (ParseFd(text, &fd) != 0) {
    fprintf(stderr, "%s: %s=\"%s\" is not a file descriptor number\n", program_name,
            MEMPROF_TEST_READY_FD_ENV, text);
    return -1;
  }
  static const char kReady[] = "ready\n";
  int rc = TestProgWriteAll(fd, kReady, sizeof(kReady) - 1);
  if (rc != 0) {
    fprintf(stderr, "%s: writing to readiness fd %d: %s\n", program_name, fd, strerror(errno));
  }
  close(fd);
  return rc;
}
