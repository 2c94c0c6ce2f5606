#include "tests/integration/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "common/fd.h"

namespace memprof::integration {
namespace {

constexpr int kStepTimeoutMs = 10000;

std::string Receive(int fd) {
  std::string data;
  char buf[8192];
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kStepTimeoutMs) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

}  // namespace

HttpResult HttpGet(const std::string& host_port, const std::string& path) {
  HttpResult result;
  const size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) return result;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(host_port.substr(colon + 1).c_str())));
  if (::inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &addr.sin_addr) != 1) return result;
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return result;
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + host_port + "\r\n\r\n";
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return result;
  }
  const std::string data = Receive(fd.get());
  const size_t end = data.find("\r\n\r\n");
  if (!data.starts_with("HTTP/1.") || end == std::string::npos || data.size() < 12) return result;
  result.status = std::atoi(data.substr(9, 3).c_str());
  result.headers = data.substr(0, end);
  result.body = data.substr(end + 4);
  return result;
}

CommandResult PromtoolCheck(const std::string& promtool, const std::string& exposition,
                            const std::string& scratch_file) {
  {
    std::ofstream out(scratch_file, std::ios::binary | std::ios::trunc);
    out << exposition;
  }
  // promtool reads the exposition on stdin; RunCommand gives children /dev/null.
  return RunCommand({"/bin/sh", "-c", "exec \"$0\" check metrics < \"$1\"", promtool, scratch_file},
                    {});
}

}  // namespace memprof::integration
