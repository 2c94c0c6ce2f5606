#ifndef MEMPROF_CLI_IO_USER_NAME_H_
#define MEMPROF_CLI_IO_USER_NAME_H_

#include <sys/types.h>

#include <string>

namespace memprof::cli {

// The login name of `uid` from the passwd database, or the number as text
// when it has no entry (e.g. a uid that exists only inside a container).
std::string UserName(uid_t uid);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_IO_USER_NAME_H_
