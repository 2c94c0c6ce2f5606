#include "agent/shared/tcp_address.h"

#include <netinet/in.h>

#include "common/host_port.h"

namespace memprof::agent {
namespace {

constexpr char kExamples[] =
    "expected IP:PORT, e.g. 10.0.0.5:7070, [::1]:7070, localhost:7070 or 0.0.0.0:7070";

std::unexpected<Error> Invalid(std::string_view text, const std::string& why) {
  return Fail(ErrorCode::kInvalidArgument,
              "invalid address '" + std::string(text) + "': " + why + "; " + kExamples);
}

}  // namespace

std::string TcpAddress::ToString() const {
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<TcpAddress> ParseTcpAddress(std::string_view text) {
  auto parts = SplitHostPort(text, 1);
  if (!parts) return Invalid(text, parts.error().message);
  TcpAddress address;
  address.port = parts->port;
  if (parts->bracketed) {
    if (!IsIpLiteral(AF_INET6, parts->host)) {
      return Invalid(text, "'" + parts->host + "' is not an IPv6 address");
    }
    address.host = parts->host;
    address.ipv6 = true;
    return address;
  }
  address.host = parts->host == "localhost" ? "127.0.0.1" : parts->host;
  if (!IsIpLiteral(AF_INET, address.host)) {
    return Invalid(text,
                   "'" + parts->host + "' is not an IP address (host names are not resolved)");
  }
  return address;
}

}  // namespace memprof::agent
