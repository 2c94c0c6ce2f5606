#include "cli/listen_address.h"

#include <arpa/inet.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace memprof::cli {
namespace {

constexpr char kExamples[] =
    "expected IP:PORT, e.g. 127.0.0.1:9464, [::1]:9464, localhost:9464 or 0.0.0.0:9464 "
    "(port 0: any free port)";

std::unexpected<Error> Invalid(std::string_view text, const std::string& why) {
  return Fail(ErrorCode::kInvalidArgument,
              "invalid listen address '" + std::string(text) + "': " + why + "; " + kExamples);
}

Result<uint16_t> ParsePort(std::string_view text, std::string_view port) {
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return Invalid(text, "the port must be a number from 0 to 65535");
  }
  return static_cast<uint16_t>(value);
}

// Splits "host:port" / "[v6]:port" into host and port.
Result<std::pair<std::string, std::string_view>> Split(std::string_view text) {
  if (text.starts_with('[')) {
    const size_t close = text.find("]:");
    if (close == std::string_view::npos) return Invalid(text, "missing ']:PORT'");
    return std::pair{std::string(text.substr(1, close - 1)), text.substr(close + 2)};
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Invalid(text, "missing ':PORT'");
  const std::string host(text.substr(0, colon));
  if (host.find(':') != std::string::npos) {
    return Invalid(text, "an IPv6 address goes in brackets");
  }
  return std::pair{host, text.substr(colon + 1)};
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
  auto parts = Split(text);
  if (!parts) return Fail(parts.error());
  auto port = ParsePort(text, parts->second);
  if (!port) return Fail(port.error());
  const std::string host = parts->first == "localhost" ? "127.0.0.1" : parts->first;
  ListenAddress address;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(*port);
    address.length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(*port);
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
