#ifndef MEMPROF_CLI_EXPORTER_LISTEN_ADDRESS_H_
#define MEMPROF_CLI_EXPORTER_LISTEN_ADDRESS_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace memprof::cli {

// Where a server listens: an IP address (v4 or v6) and a port (0: any free
// port, chosen by the kernel).
struct ListenAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  uint16_t port() const;
  // 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104.
  bool IsLoopback() const;
  // "127.0.0.1:9464", "[::1]:9464".
  std::string ToString() const;
};

// Parses "HOST:PORT" where HOST is an IPv4 address, an IPv6 address in
// brackets, or "localhost" (127.0.0.1); PORT is 0 to 65535. Host names are
// not resolved (which of their addresses would it be?). kInvalidArgument,
// with examples of valid forms, for anything else.
[[nodiscard]] Result<ListenAddress> ParseListenAddress(std::string_view text);

// The address a bound socket actually got (the port of ":0" included).
[[nodiscard]] Result<ListenAddress> LocalAddressOf(int fd);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_EXPORTER_LISTEN_ADDRESS_H_
