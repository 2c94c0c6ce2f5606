#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_HEX_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_HEX_H_

#include <charconv>
#include <cstdint>
#include <string>

namespace memprof::symbolize {

// Lower-case hex without prefix or padding, as /proc/<pid>/maps prints addresses.
inline std::string LowerHex(uint64_t value) {
  char buffer[16];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value, 16);
  return std::string(buffer, result.ptr);
}

}  // namespace memprof::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_HEX_H_
