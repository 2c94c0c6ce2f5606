#include "cli/exporter/listen_address.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "common/host_port.h"

namespace memprof::cli {
namespace {

constexpr char kExamples[] =
    "expected IP:PORT, e.g. 127.0.0.1:9464, [::1]:9464, localhost:9464 or 0.0.0.0:9464 "
    "(port 0: any free port)";

std::unexpected<Error> Invalid(std::string_view text, const std::string& why) {
  return Fail(ErrorCode::kInvalidArgument,
              "invalid listen address '" + std::string(text) + "': " + why + "; " + kExamples);
}

}  // namespace

uint16_t ListenAddress::port() const {
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

bool ListenAddress::IsLoopback() const {
  if (family() == AF_INET) {
    const uint32_t ip = ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr);
    return (ip >> 24) == 127;
  }
  const in6_addr& ip = reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr;
  if (IN6_IS_ADDR_LOOPBACK(&ip)) return true;
  return IN6_IS_ADDR_V4MAPPED(&ip) && ip.s6_addr[12] == 127;
}

std::string ListenAddress::ToString() const {
  char host[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, host,
                sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(port());
  }
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, host,
              sizeof(host));
  return std::string(host) + ":" + std::to_string(port());
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto parts = SplitHostPort(text, 0);
  if (!parts) return Invalid(text, parts.error().message);
  const uint16_t port = parts->port;
  const std::string host = parts->host == "localhost" ? "127.0.0.1" : parts->host;
  ListenAddress address;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    address.length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    address.length = sizeof(sockaddr_in6);
  } else {
    return Invalid(text, "'" + host + "' is not an IP address (host names are not resolved)");
  }
  return address;
}

Result<ListenAddress> LocalAddressOf(int fd) {
  ListenAddress address;
  address.length = sizeof(address.storage);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) {
    return Fail(ErrorCode::kInternal, std::string("getsockname: ") + std::strerror(errno));
  }
  return address;
}

}  // namespace memprof::cli
