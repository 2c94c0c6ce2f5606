#ifndef MEMPROF_TESTS_SUPPORT_HTTP_CLIENT_H_
#define MEMPROF_TESTS_SUPPORT_HTTP_CLIENT_H_

#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace memprof::test_support {

// What a tiny HTTP/1.0 client got back.
struct HttpReply {
  int status = 0;  // 0: no reply (connection failed, or not HTTP)
  std::string headers;
  std::string body;
};

// Sends "METHOD PATH HTTP/1.0" with "Host: `host`" (plus `extra_body` as a
// body, if any) to `address` and reads the reply until the server closes;
// 10 s deadline for each step. A real client over a real socket, no library.
HttpReply HttpRequest(const sockaddr* address, socklen_t length, const std::string& method,
                      const std::string& path, const std::string& host,
                      const std::string& extra_body = "");

// The same to "IPv4:PORT" (also its Host header).
HttpReply HttpRequest(const std::string& host_port, const std::string& method,
                      const std::string& path, const std::string& body);

// "GET path HTTP/1.0" to "IPv4:PORT".
HttpReply HttpGet(const std::string& host_port, const std::string& path);

// A free TCP port on loopback (the kernel's pick, released for a server the
// test starts); 0 if there is none.
uint16_t FreeLoopbackPort();

}  // namespace memprof::test_support

#endif  // MEMPROF_TESTS_SUPPORT_HTTP_CLIENT_H_
