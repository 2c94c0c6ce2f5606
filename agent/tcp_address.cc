#include "agent/tcp_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <utility>

namespace memprof::agent {
namespace {

constexpr char kExamples[] =
    "expected IP:PORT, e.g. 10.0.0.5:7070, [::1]:7070, localhost:7070 or 0.0.0.0:7070";

std::unexpected<Error> Invalid(std::string_view text, const std::string& why) {
  return Fail(ErrorCode::kInvalidArgument,
              "invalid address '" + std::string(text) + "': " + why + "; " + kExamples);
}

Result<uint16_t> ParsePort(std::string_view text, std::string_view port) {
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value < 1 ||
      value > 65535) {
    return Invalid(text, "the port must be a number from 1 to 65535");
  }
  return static_cast<uint16_t>(value);
}

struct HostPort {
  std::string host;
  bool bracketed = false;
  std::string_view port;
};

// Splits "host:port" / "[v6]:port".
Result<HostPort> Split(std::string_view text) {
  if (text.starts_with('[')) {
    const size_t close = text.find("]:");
    if (close == std::string_view::npos) return Invalid(text, "missing ']:PORT'");
    return HostPort{std::string(text.substr(1, close - 1)), true, text.substr(close + 2)};
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Invalid(text, "missing ':PORT'");
  std::string host(text.substr(0, colon));
  if (host.find(':') != std::string::npos) {
    return Invalid(text, "an IPv6 address goes in brackets");
  }
  return HostPort{std::move(host), false, text.substr(colon + 1)};
}

bool IsIp(int family, const std::string& host) {
  in6_addr buffer{};  // large enough for either family
  return ::inet_pton(family, host.c_str(), &buffer) == 1;
}

}  // namespace

std::string TcpAddress::ToString() const {
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<TcpAddress> ParseTcpAddress(std::string_view text) {
  auto parts = Split(text);
  if (!parts) return Fail(parts.error());
  auto port = ParsePort(text, parts->port);
  if (!port) return Fail(port.error());
  if (parts->host.empty()) return Invalid(text, "the host is missing");
  TcpAddress address;
  address.port = *port;
  if (parts->bracketed) {
    if (!IsIp(AF_INET6, parts->host)) {
      return Invalid(text, "'" + parts->host + "' is not an IPv6 address");
    }
    address.host = parts->host;
    address.ipv6 = true;
    return address;
  }
  address.host = parts->host == "localhost" ? "127.0.0.1" : parts->host;
  if (!IsIp(AF_INET, address.host)) {
    return Invalid(text,
                   "'" + parts->host + "' is not an IP address (host names are not resolved)");
  }
  return address;
}

}  // namespace memprof::agent
