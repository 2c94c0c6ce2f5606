#include "common/socket_path.h"

#include <sys/un.h>

#include <charconv>
#include <cstdlib>

namespace memprof {

std::string SocketDirectoryFrom(std::string_view value) {
  std::string dir = value.empty() ? std::string(kDefaultSocketDir) : std::string(value);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string SocketDirectory() {
  const char* env = std::getenv(kSocketDirEnv);
  return SocketDirectoryFrom(env != nullptr ? env : "");
}

Result<std::string> SocketPathForPid(std::string_view dir, pid_t pid) {
  if (dir.empty() || dir.front() != '/') {
    return Fail(ErrorCode::kInvalidArgument,
                "socket directory '" + std::string(dir) + "' must be an absolute path");
  }
  std::string path = std::string(dir) + "/" + std::to_string(pid) + ".sock";
  // Leave room for a ".tmp" suffix used while binding, and the terminating NUL.
  constexpr size_t kMax = sizeof(sockaddr_un{}.sun_path) - sizeof(".tmp");
  if (path.size() > kMax) {
    return Fail(ErrorCode::kInvalidArgument,
                "socket path '" + path + "' is longer than " + std::to_string(kMax) +
                    " bytes, the limit of a Unix socket path; choose a shorter " +
                    kSocketDirEnv);
  }
  return path;
}

std::optional<pid_t> PidFromSocketName(std::string_view name) {
  constexpr std::string_view kSuffix = ".sock";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return std::nullopt;
  std::string_view digits = name.substr(0, name.size() - kSuffix.size());
  if (digits.front() == '0') return std::nullopt;
  pid_t pid = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || pid <= 0) return std::nullopt;
  return pid;
}

Result<void> CheckSocketDirectory(const struct stat& st, uid_t self, std::string_view path) {
  const std::string where = "socket directory '" + std::string(path) + "'";
  if (S_ISLNK(st.st_mode)) {
    return Fail(ErrorCode::kPermissionDenied, where + " is a symbolic link; refusing to use it");
  }
  if (!S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kFailedPrecondition, where + " is not a directory");
  }
  if (st.st_uid != 0 && st.st_uid != self) {
    return Fail(ErrorCode::kPermissionDenied,
                where + " is owned by uid " + std::to_string(st.st_uid) +
                    ", not by root or uid " + std::to_string(self) + "; refusing to use it");
  }
  const bool shared_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (shared_write && (st.st_mode & S_ISVTX) == 0) {
    return Fail(ErrorCode::kPermissionDenied,
                where + " is writable by other users but lacks the sticky bit (chmod +t)");
  }
  return {};
}

}  // namespace memprof
