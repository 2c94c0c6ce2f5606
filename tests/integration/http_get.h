#ifndef MEMPROF_TESTS_INTEGRATION_HTTP_GET_H_
#define MEMPROF_TESTS_INTEGRATION_HTTP_GET_H_

#include <string>

#include "tests/integration/command_runner.h"

namespace memprof::integration {

// What a tiny HTTP/1.0 client got back; status 0 when nothing HTTP came.
struct HttpResult {
  int status = 0;
  std::string headers;
  std::string body;
};

// "GET path HTTP/1.0" to "IPv4:PORT", read until the server closes (10 s
// deadline per step). A real client over a real socket, no library.
HttpResult HttpGet(const std::string& host_port, const std::string& path);

// `promtool check metrics` on `exposition` (written to `scratch_file`).
CommandResult PromtoolCheck(const std::string& promtool, const std::string& exposition,
                            const std::string& scratch_file);

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HTTP_GET_H_
