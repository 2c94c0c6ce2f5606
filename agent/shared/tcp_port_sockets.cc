#include "agent/shared/tcp_port_sockets.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace memprof::agent {
namespace {

// The fixed part of each record getdents64(2) fills in; the NUL-terminated
// name follows d_type.
struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
};
constexpr size_t kNameOffset = offsetof(LinuxDirent64, d_type) + 1;

int IntOption(int fd, int option) {
  int value = -1;
  socklen_t length = sizeof(value);
  if (::getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0) return -1;
  return value;
}

bool IsTcpSocketOnPort(int fd, uint16_t port) {
  const int domain = IntOption(fd, SO_DOMAIN);  // fails (ENOTSOCK) for anything else
  if (domain != AF_INET && domain != AF_INET6) return false;
  if (IntOption(fd, SO_TYPE) != SOCK_STREAM || IntOption(fd, SO_PROTOCOL) != IPPROTO_TCP) {
    return false;
  }
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return false;
  const in_port_t local = domain == AF_INET
                              ? reinterpret_cast<const sockaddr_in*>(&address)->sin_port
                              : reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port;
  return local == htons(port);
}

// A descriptor number from a /proc/self/fd entry name; -1 for "." and "..".
int ParseFd(const char* name) {
  if (*name == '\0') return -1;
  int fd = 0;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9') return -1;
    fd = fd * 10 + (*name - '0');
  }
  return fd;
}

}  // namespace

int CloseTcpSocketsOnPort(uint16_t port) {
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  int closed = 0;
  alignas(LinuxDirent64) char buffer[4096];
  while (true) {
    const long n = ::syscall(SYS_getdents64, dir, buffer, sizeof(buffer));
    if (n <= 0) break;
    for (long offset = 0; offset < n;) {
      const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + offset);
      offset += entry->d_reclen;
      const int fd = ParseFd(reinterpret_cast<const char*>(entry) + kNameOffset);
      if (fd < 0 || fd == dir || !IsTcpSocketOnPort(fd, port)) continue;
      if (::close(fd) == 0) ++closed;
    }
  }
  ::close(dir);
  return closed;
}

}  // namespace memprof::agent
