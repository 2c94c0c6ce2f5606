#ifndef MEMPROF_AGENT_SHARED_TCP_ADDRESS_H_
#define MEMPROF_AGENT_SHARED_TCP_ADDRESS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof::agent {

// Where the remote (TCP) listener binds: an IP address literal and a port.
struct TcpAddress {
  std::string host;  // "10.0.0.5", "0.0.0.0", "::1" (no brackets)
  bool ipv6 = false;
  uint16_t port = 0;

  // "10.0.0.5:7070", "[::1]:7070": what gRPC's AddListeningPort takes and
  // what the logs show.
  std::string ToString() const;
};

// Parses MEMPROF_LISTEN: "HOST:PORT" where HOST is an IPv4 address, an IPv6
// address in brackets ("[::1]:7070"), or "localhost" (127.0.0.1), and PORT is
// 1 to 65535. Host names are not resolved (which of their addresses would the
// agent bind?). kInvalidArgument, saying what is wrong and giving examples.
[[nodiscard]] Result<TcpAddress> ParseTcpAddress(std::string_view text);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_SHARED_TCP_ADDRESS_H_
