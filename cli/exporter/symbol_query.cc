#include "cli/exporter/symbol_query.h"

#include <charconv>

namespace memprof::cli {
namespace {

constexpr char kSymbolBodyUsage[] =
    "POST hexadecimal addresses joined by '+', e.g. 0x4a1f2c+0x4a2b10, as pprof sends them";

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// "0x" and 1 to 16 hex digits.
Result<uint64_t> ParseHexAddress(std::string_view word) {
  uint64_t address = 0;
  const bool prefixed = word.starts_with("0x") || word.starts_with("0X");
  const char* begin = word.data() + (prefixed ? 2 : 0);
  const char* end = word.data() + word.size();
  auto [ptr, ec] = std::from_chars(begin, end, address, 16);
  if (!prefixed || begin == end || ec != std::errc() || ptr != end) {
    const std::string shown(word.substr(0, 40));
    return Fail(ErrorCode::kInvalidArgument,
                "'" + shown + (word.size() > 40 ? "...'" : "'") +
                    " is not a hexadecimal address (0x...): " + kSymbolBodyUsage);
  }
  return address;
}

}  // namespace

Result<std::vector<uint64_t>> ParseSymbolRequest(std::string_view body) {
  body = TrimSpace(body);
  if (body.empty()) {
    return Fail(ErrorCode::kInvalidArgument, std::string("no addresses: ") + kSymbolBodyUsage);
  }
  std::vector<uint64_t> addresses;
  while (true) {
    if (addresses.size() == kMaxSymbolAddresses) {
      return Fail(ErrorCode::kInvalidArgument,
                  "more than " + std::to_string(kMaxSymbolAddresses) +
                      " addresses in one symbol request; send them in several");
    }
    const size_t plus = body.find('+');
    auto address = ParseHexAddress(body.substr(0, plus));
    if (!address) return Fail(address.error());
    addresses.push_back(*address);
    if (plus == std::string_view::npos) return addresses;
    body.remove_prefix(plus + 1);
  }
}

std::string FormatSymbolAnswer(std::span<const uint64_t> addresses,
                               std::span<const std::string> names) {
  std::string answer;
  for (size_t i = 0; i < addresses.size() && i < names.size(); ++i) {
    if (names[i].empty()) continue;
    char hex[16];
    const char* end = std::to_chars(hex, hex + sizeof(hex), addresses[i], 16).ptr;
    answer.append("0x").append(hex, static_cast<size_t>(end - hex));
    answer.append(" ").append(names[i]).append("\n");
  }
  return answer;
}

}  // namespace memprof::cli
