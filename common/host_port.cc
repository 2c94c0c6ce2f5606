#include "common/host_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

namespace memprof {
namespace {

std::unexpected<Error> Invalid(const std::string& why) {
  return Fail(ErrorCode::kInvalidArgument, why);
}

Result<uint16_t> ParsePort(std::string_view port, uint16_t min_port) {
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value < min_port ||
      value > 65535) {
    return Invalid("the port must be a number from " + std::to_string(min_port) + " to 65535");
  }
  return static_cast<uint16_t>(value);
}

}  // namespace

Result<HostPort> SplitHostPort(std::string_view text, uint16_t min_port) {
  HostPort parts;
  std::string_view port;
  if (text.starts_with('[')) {
    const size_t close = text.find("]:");
    if (close == std::string_view::npos) return Invalid("missing ']:PORT'");
    parts.host = std::string(text.substr(1, close - 1));
    parts.bracketed = true;
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return Invalid("missing ':PORT'");
    parts.host = std::string(text.substr(0, colon));
    if (parts.host.find(':') != std::string::npos) {
      return Invalid("an IPv6 address goes in brackets");
    }
    port = text.substr(colon + 1);
  }
  auto number = ParsePort(port, min_port);
  if (!number) return Fail(number.error());
  if (parts.host.empty()) return Invalid("the host is missing");
  parts.port = *number;
  return parts;
}

bool IsIpLiteral(int family, const std::string& host) {
  in6_addr buffer{};  // large enough for either family
  return ::inet_pton(family, host.c_str(), &buffer) == 1;
}

}  // namespace memprof
