#ifndef MEMPROF_COMMON_HOST_PORT_H_
#define MEMPROF_COMMON_HOST_PORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof {

// "HOST:PORT" taken apart, for the addresses memprof listens on or dials
// (MEMPROF_LISTEN, exporter --listen, --target): the host as written, without
// the brackets of "[v6]:port", and the port as a number.
struct HostPort {
  std::string host;
  bool bracketed = false;  // written as "[host]:port" (an IPv6 address)
  uint16_t port = 0;
};

// Splits `text` and reads the port, which must be `min_port` to 65535. The
// host is not checked beyond being present. On failure the error
// (kInvalidArgument) says only what is wrong ("missing ':PORT'", "an IPv6
// address goes in brackets", ...): callers put it into their own message,
// with the examples that fit them.
[[nodiscard]] Result<HostPort> SplitHostPort(std::string_view text, uint16_t min_port);

// Whether `host` is an IPv4 (AF_INET) or IPv6 (AF_INET6) address literal.
bool IsIpLiteral(int family, const std::string& host);

}  // namespace memprof

#endif  // MEMPROF_COMMON_HOST_PORT_H_
