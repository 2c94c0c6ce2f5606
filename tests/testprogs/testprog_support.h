#ifndef MEMPROF_TESTS_TESTPROGS_TESTPROG_SUPPORT_H_
#define MEMPROF_TESTS_TESTPROGS_TESTPROG_SUPPORT_H_

// Shared plumbing for the integration-test target programs (C and C++):
// a stop flag set by SIGTERM/SIGINT and the optional readiness handshake.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Name of the environment variable that carries the readiness fd.
#define MEMPROF_TEST_READY_FD_ENV "MEMPROF_TEST_READY_FD"

// Installs SIGTERM and SIGINT handlers that only set the stop flag, so the
// program leaves its loop and returns from main() with status 0 (atexit
// handlers such as jemalloc's prof_final dump still run). Handlers are
// process-wide, so this works whichever thread the signal lands on.
// Returns 0, or -1 (with a message on stderr) if sigaction failed.
int TestProgInstallStopHandlers(void);

// True (non-zero) once SIGTERM or SIGINT arrived. Safe from any thread.
int TestProgStopRequested(void);

// Sleeps up to `millis` ms; returns early when a signal interrupts it.
void TestProgSleepMillis(int millis);

// Writes all `size` bytes of `data` to `fd`, retrying after EINTR and short
// writes. Returns 0, or -1 if a write fails.
int TestProgWriteAll(int fd, const char* data, size_t size);

// The readiness handshake: if MEMPROF_TEST_READY_FD=N is set, writes "ready\n"
// to fd N and closes it. Does nothing when the variable is unset. Returns 0 on
// success or when unset, -1 (with a message on stderr) when the variable is
// malformed or the write fails.
int TestProgSignalReady(const char* program_name);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MEMPROF_TESTS_TESTPROGS_TESTPROG_SUPPORT_H_
