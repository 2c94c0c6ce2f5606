#ifndef MEMPROF_COMMON_PATH_H_
#define MEMPROF_COMMON_PATH_H_

#include <string>
#include <string_view>

namespace memprof {

// The last component of `path` ("libc.so.6" of "/usr/lib/libc.so.6"), or
// `path` itself when it has no slash.
inline std::string PathBasename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace memprof

#endif  // MEMPROF_COMMON_PATH_H_
