#ifndef MEMPROF_TESTS_TESTPROGS_LINE_SERVER_H_
#define MEMPROF_TESTS_TESTPROGS_LINE_SERVER_H_

// A line protocol for the guest-host target programs (close_range_host,
// prefork_server, exec_host): commands arrive one per line on stdin, and the
// services they run answer one request line per TCP connection with one reply
// line. Small, blocking and unbuffered, so a program's descriptors are exactly
// the ones it opened itself (no stdio stream on a socket).

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Reads one line from `fd` into `buf` without the newline (NUL-terminated; a
// longer line is cut at size - 1). Returns its length, 0 at EOF before any
// byte, -1 on error. A signal makes it return -1 with errno EINTR, so the
// caller can look at its stop flag.
int LineRead(int fd, char* buf, size_t size);

// Writes all of `text` (a NUL-terminated string). 0, or -1 on error.
int LineWrite(int fd, const char* text);

// A TCP socket listening on 127.0.0.1 at a port the kernel picks, stored in
// *port. Not close-on-exec: it belongs to the service, which may hand it on.
// Returns the descriptor, or -1 (with a message on stderr).
int LineServerListen(unsigned short* port);

// Answers one request: `reply` (of `reply_size` bytes) gets the reply line,
// without the newline.
typedef void (*LineHandler)(const char* request, char* reply, size_t reply_size);

// Accepts one connection on `listen_fd` (blocking), reads its request line,
// writes handler's reply and a newline, and closes it. Returns 0 once a
// connection was served (whatever the client did), or -1 when accept()
// failed (errno EINTR: a signal arrived).
int LineServeOne(int listen_fd, LineHandler handler);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MEMPROF_TESTS_TESTPROGS_LINE_SERVER_H_
