#ifndef MEMPROF_CLI_REPORT_SYMBOLIZE_HEX_H_
#define MEMPROF_CLI_REPORT_SYMBOLIZE_HEX_H_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>

namespace memprof::report::symbolize {

// Lower-case hex without prefix or padding, as /proc/<pid>/maps prints addresses.
inline std::string LowerHex(uint64_t value) {
  char buffer[16];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value, 16);
  return std::string(buffer, result.ptr);
}

// Lower-case hex of `size` bytes, two digits each (a build ID note's bytes).
inline std::string LowerHex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    hex.push_back(kDigits[bytes[i] >> 4]);
    hex.push_back(kDigits[bytes[i] & 0xf]);
  }
  return hex;
}

}  // namespace memprof::report::symbolize

#endif  // MEMPROF_CLI_REPORT_SYMBOLIZE_HEX_H_
