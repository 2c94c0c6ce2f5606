#include "tests/support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "common/fd.h"

namespace memprof::test_support {
namespace {

constexpr int kStepTimeoutMs = 10000;

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string ReceiveAll(int fd) {
  std::string data;
  char buf[4096];
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

HttpReply HttpRequest(const sockaddr* address, socklen_t length, const std::string& method,
                      const std::string& path, const std::string& host,
                      const std::string& extra_body) {
  HttpReply reply;
  Fd fd(::socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), address, length) != 0) {
    return reply;
  }
  std::string request = method + " " + path + " HTTP/1.0\r\nHost: " + host + "\r\n";
  if (!extra_body.empty()) {
    request += "Content-Length: " + std::to_string(extra_body.size()) + "\r\n";
  }
  request += "\r\n" + extra_body;
  if (!SendAll(fd.get(), request)) return reply;
  const std::string data = ReceiveAll(fd.get());
  const size_t end = data.find("\r\n\r\n");
  if (!data.starts_with("HTTP/1.") || end == std::string::npos || data.size() < 12) return reply;
  reply.status = std::atoi(data.substr(9, 3).c_str());
  reply.headers = data.substr(0, end);
  reply.body = data.substr(end + 4);
  return reply;
}

HttpReply HttpRequest(const std::string& host_port, const std::string& method,
                      const std::string& path, const std::string& body) {
  const size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(host_port.substr(colon + 1).c_str())));
  if (::inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &addr.sin_addr) != 1) return {};
  return HttpRequest(reinterpret_cast<const sockaddr*>(&addr), sizeof(addr), method, path,
                     host_port, body);
}

HttpReply HttpGet(const std::string& host_port, const std::string& path) {
  return HttpRequest(host_port, "GET", path, "");
}

uint16_t FreeLoopbackPort() {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 0;
  }
  return ntohs(address.sin_port);
}

}  // namespace memprof::test_support
