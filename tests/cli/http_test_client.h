#ifndef MEMPROF_TESTS_CLI_HTTP_TEST_CLIENT_H_
#define MEMPROF_TESTS_CLI_HTTP_TEST_CLIENT_H_

#include <string>

#include "cli/exporter/listen_address.h"

namespace memprof::cli::testing {

// What a tiny HTTP/1.0 client got back.
struct HttpReply {
  int status = 0;  // 0: no reply (connection failed, or not HTTP)
  std::string headers;
  std::string body;
};

// Sends "METHOD PATH HTTP/1.0" (plus `extra_body` as a body, if any) and
// reads the reply until the server closes; 10 s deadline for each step.
HttpReply HttpRequestTo(const ListenAddress& address, const std::string& method,
                        const std::string& path, const std::string& extra_body = "");

}  // namespace memprof::cli::testing

#endif  // MEMPROF_TESTS_CLI_HTTP_TEST_CLIENT_H_
