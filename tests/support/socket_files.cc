#include "tests/support/socket_files.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace memprof::test_support {
namespace {

// A stream socket bound to `path`.
Fd BoundSocket(const std::string& path) {
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (!fd || path.size() >= sizeof(addr.sun_path)) throw std::runtime_error("bad socket path");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw std::runtime_error("bind " + path + ": " + std::strerror(errno));
  }
  return fd;
}

}  // namespace

void MakeSocketFile(const std::string& path) { BoundSocket(path); }

Fd ListenOn(const std::string& path) {
  Fd fd = BoundSocket(path);
  if (::listen(fd.get(), 8) != 0) {
    throw std::runtime_error("listen " + path + ": " + std::strerror(errno));
  }
  return fd;
}

}  // namespace memprof::test_support
