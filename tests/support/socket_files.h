#ifndef MEMPROF_TESTS_SUPPORT_SOCKET_FILES_H_
#define MEMPROF_TESTS_SUPPORT_SOCKET_FILES_H_

#include <string>

#include "common/fd.h"

namespace memprof::test_support {

// Unix socket files in the states a client can find an agent's socket in.
// Each throws std::runtime_error (naming the path) when it cannot make one.

// A socket file at `path` that nobody listens on (bound, then closed without
// unlinking): connect() is refused, as after an exec or an _exit of the
// process that served it.
void MakeSocketFile(const std::string& path);

// A socket listening at `path` for as long as the returned descriptor is
// open: connections queue, and nobody accepts them.
Fd ListenOn(const std::string& path);

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_SOCKET_FILES_H_
