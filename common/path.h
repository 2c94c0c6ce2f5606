#ifndef MEMPROF_COMMON_PATH_H_
#define MEMPROF_COMMON_PATH_H_

#include <string>
#include <string_view>

namespace memprof {

// The last component of `path` ("libc.so.6" of "/usr/lib/libc.so.6"), or
// `path` itself when it has no slash. A view into `path` that neither copies
// nor allocates (the agent's sampler calls it inside the host's malloc); the
// view of a NUL-terminated path is NUL-terminated too, being its tail.
constexpr std::string_view PathBasename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The directory part of `path`: "a/b" of "a/b/c", "/" of "/c", and "." when
// it has no slash.
inline std::string PathDirname(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace memprof

#endif  // MEMPROF_COMMON_PATH_H_
