#ifndef MEMPROF_COMMON_SOCKET_PATH_H_
#define MEMPROF_COMMON_SOCKET_PATH_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof {

// The local discovery convention (docs/contract.md section 2): an agent listens on
// <dir>/<pid>.sock, <dir> = $MEMPROF_SOCKET_DIR or /tmp/memprof.
inline constexpr char kDefaultSocketDir[] = "/tmp/memprof";
inline constexpr char kSocketDirEnv[] = "MEMPROF_SOCKET_DIR";

// The socket directory an agent serves in when MEMPROF_SOCKET_DIR is
// `value`: `value` without its trailing slashes, or kDefaultSocketDir when
// it is empty (or unset). The agent's configuration and memprofctl's
// diagnosis of another process's environment both read it here.
std::string SocketDirectoryFrom(std::string_view value);

// The socket directory from this process's environment
// (SocketDirectoryFrom($MEMPROF_SOCKET_DIR)).
std::string SocketDirectory();

// "<dir>/<pid>.sock". Fails with kInvalidArgument when the path does not fit
// in sockaddr_un::sun_path or `dir` is not absolute.
[[nodiscard]] Result<std::string> SocketPathForPid(std::string_view dir, pid_t pid);

// The pid named by a socket file name such as "1234.sock"; nullopt for any
// other name (including "1234.sock.tmp" and "01234.sock").
std::optional<pid_t> PidFromSocketName(std::string_view file_name);

// Whether a directory with this lstat() result is safe to hold sockets for
// user `self`: a real directory (not a symlink), owned by root or `self`,
// not writable by group/others unless it has the sticky bit (like /tmp/.X11-unix).
// `path` is only used in the message.
[[nodiscard]] Result<void> CheckSocketDirectory(const struct stat& st, uid_t self,
                                                std::string_view path);

}  // namespace memprof

#endif  // MEMPROF_COMMON_SOCKET_PATH_H_
