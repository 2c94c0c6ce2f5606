#ifndef MEMPROF_COMMON_TEXT_FILE_H_
#define MEMPROF_COMMON_TEXT_FILE_H_

#include <string>

#include "common/result.h"

namespace memprof {

// Reads a whole (small) text file: a /proc file, a config file, a dpkg list.
// kNotFound if it does not exist (or, for /proc, its process is gone: ESRCH),
// kPermissionDenied on EACCES or EPERM, kInternal otherwise.
[[nodiscard]] Result<std::string> ReadTextFile(const std::string& path);

}  // namespace memprof

#endif  // MEMPROF_COMMON_TEXT_FILE_H_
