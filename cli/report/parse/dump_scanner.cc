#include "cli/report/parse/dump_scanner.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <utility>

namespace memprof::report::parse {
namespace {

constexpr size_t kExcerptBytes = 40;
constexpr size_t kMaxHexDigits = 16;

std::string Named(std::string_view kind, std::string_view what) {
  std::string name(kind);
  if (!name.empty()) name += ' ';
  return name += what;
}

constexpr int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<objects>: <bytes>".
Result<RawCounts> ParsePair(DumpScanner& scanner, std::string_view kind, ZeroBytes zero_bytes) {
  RawCounts counts;
  scanner.SkipBlanks();
  auto objects = scanner.Decimal(kind, "object count");
  if (!objects) return Fail(objects.error());
  if (auto ok = ExpectChar(scanner, ':', "after the object count"); !ok) return Fail(ok.error());
  scanner.SkipBlanks();
  auto bytes = scanner.Decimal(kind, "byte count");
  if (!bytes) return Fail(bytes.error());
  if (*objects == 0 && *bytes != 0) {
    return BadField(std::string(kind) + " counts have " + std::to_string(*bytes) +
                    " bytes in 0 objects");
  }
  if (*objects != 0 && *bytes == 0 && zero_bytes == ZeroBytes::kReject) {
    return BadField(std::string(kind) + " counts have " + std::to_string(*objects) +
                    " objects of 0 bytes");
  }
  counts.objects = *objects;
  counts.bytes = *bytes;
  return counts;
}

}  // namespace

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

std::string Excerpt(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, kExcerptBytes)) {
    auto byte = static_cast<unsigned char>(c);
    if (std::isprint(byte) != 0) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      out += escaped;
    }
  }
  if (text.size() > kExcerptBytes) out += "...";
  return out + "'";
}

std::optional<uint64_t> ParseHexAddress(std::string_view token) {
  if (token.starts_with("0x") || token.starts_with("0X")) token.remove_prefix(2);
  if (token.empty() || token.size() > kMaxHexDigits) return std::nullopt;
  uint64_t value = 0;
  for (char c : token) {
    const int digit = HexDigit(c);
    if (digit < 0) return std::nullopt;
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

std::unexpected<Error> BadField(std::string what) {
  return Fail(ErrorCode::kInvalidArgument, std::move(what));
}

std::unexpected<Error> DumpScanner::DecimalError(std::errc ec, std::string_view kind,
                                                 std::string_view what) const {
  if (ec == std::errc::result_out_of_range) {
    return BadField(Named(kind, what) + " does not fit in 64 bits");
  }
  return BadField("expected " + Named(kind, what) + ", got " + Excerpt(text_));
}

Result<void> ExpectChar(DumpScanner& scanner, char c, std::string_view where) {
  scanner.SkipBlanks();
  if (scanner.Consume(c)) return {};
  return BadField(std::string("expected '") + c + "' " + std::string(where) + ", got " +
                  Excerpt(scanner.rest()));
}

Result<CountLine> ParseCountLine(DumpScanner& scanner, ZeroBytes zero_bytes) {
  CountLine line;
  auto inuse = ParsePair(scanner, "in-use", zero_bytes);
  if (!inuse) return Fail(inuse.error());
  if (auto ok = ExpectChar(scanner, '[', "before the accumulated counts"); !ok) {
    return Fail(ok.error());
  }
  auto alloc = ParsePair(scanner, "accumulated", zero_bytes);
  if (!alloc) return Fail(alloc.error());
  if (auto ok = ExpectChar(scanner, ']', "after the accumulated counts"); !ok) {
    return Fail(ok.error());
  }
  line.inuse = *inuse;
  line.alloc = *alloc;
  return line;
}

namespace {

// Hex digit values, kNotHex for every other byte.
constexpr uint8_t kNotHex = 0xff;
constexpr std::array<uint8_t, 256> kHexValues = [] {
  std::array<uint8_t, 256> values{};
  values.fill(kNotHex);
  for (int c = 0; c < 256; ++c) {
    const int digit = HexDigit(static_cast<char>(c));
    if (digit >= 0) values[static_cast<size_t>(c)] = static_cast<uint8_t>(digit);
  }
  return values;
}();

}  // namespace

bool ParseWellFormedStack(std::string_view text, size_t max_frames, std::vector<uint64_t>& stack) {
  stack.clear();
  const char* p = text.data();
  const char* const end = text.data() + text.size();
  for (;;) {
    while (p != end && IsBlank(*p)) ++p;
    if (p == end) return !stack.empty();
    if (stack.size() == max_frames) return false;
    if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    const char* const digits = p;
    uint64_t value = 0;
    for (uint8_t digit; p != end && (digit = kHexValues[static_cast<uint8_t>(*p)]) != kNotHex; ++p) {
      value = value << 4 | digit;
    }
    const auto length = static_cast<size_t>(p - digits);
    if (length == 0 || length > kMaxHexDigits || (p != end && !IsBlank(*p))) return false;
    stack.push_back(value);
  }
}

Result<void> ParseStackAddresses(std::string_view text, size_t max_frames,
                                 std::vector<uint64_t>& stack) {
  if (ParseWellFormedStack(text, max_frames, stack)) return {};
  DumpScanner scanner(text);
  stack.clear();
  scanner.SkipBlanks();
  while (!scanner.AtEnd()) {
    if (stack.size() == max_frames) {
      return BadField("stack has more than " + std::to_string(max_frames) + " frames");
    }
    auto address = scanner.Address();
    if (!address) return Fail(address.error());
    stack.push_back(*address);
    scanner.SkipBlanks();
  }
  if (stack.empty()) return BadField("stack line '@' has no addresses");
  return {};
}

}  // namespace memprof::report::parse
