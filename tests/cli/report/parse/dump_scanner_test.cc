#include "cli/report/parse/dump_scanner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace memprof::report::parse {
namespace {

// `value` in hex with exactly `digits` digits (leading zeros), upper or
// lower case, after "0x", "0X" or nothing.
std::string HexToken(uint64_t value, int digits, bool upper, int prefix) {
  static constexpr const char* kPrefixes[] = {"0x", "0X", ""};
  std::string text = kPrefixes[prefix];
  for (int i = digits - 1; i >= 0; --i) {
    const unsigned nibble = static_cast<unsigned>(value >> (4 * i)) & 0xf;
    text += (upper ? "0123456789ABCDEF" : "0123456789abcdef")[nibble];
  }
  return text;
}

// A well-formed stack line of 1 to `max_tokens` addresses: every token
// length from 1 to 16 digits, in both cases, with and without "0x",
// separated by spaces and tabs, a blank or two after the last or not.
struct WellFormedLine {
  std::string text;
  std::vector<uint64_t> addresses;
};

WellFormedLine RandomWellFormedLine(std::mt19937_64& random, int max_tokens) {
  WellFormedLine line;
  const int tokens = 1 + static_cast<int>(random() % static_cast<uint64_t>(max_tokens));
  for (int t = 0; t < tokens; ++t) {
    const int digits = 1 + static_cast<int>(random() % 16);
    const uint64_t value = digits == 16 ? random() : random() & ((uint64_t{1} << (4 * digits)) - 1);
    line.text += std::string(1 + random() % 2, random() % 4 == 0 ? '\t' : ' ');
    line.text += HexToken(value, digits, random() % 2 == 0, static_cast<int>(random() % 3));
    line.addresses.push_back(value);
  }
  line.text += std::string(random() % 3, ' ');
  return line;
}

// Anywhere in lines long and short.
TEST(ParseStackAddressesTest, EveryDigitCountCaseAndPlaceInTheLine) {
  std::mt19937_64 random(20261128);
  for (int round = 0; round < 2000; ++round) {
    const WellFormedLine line = RandomWellFormedLine(random, 12);
    std::vector<uint64_t> stack;
    ASSERT_TRUE(ParseStackAddresses(line.text, 128, stack).has_value()) << line.text;
    EXPECT_EQ(stack, line.addresses) << line.text;
  }
}

// Bad digits, no digits, too many, bytes above 0x7f, a token run on: at
// the start of the line and at its end, each is refused.
TEST(ParseStackAddressesTest, MalformedTokensAreRefusedWherever) {
  const std::string padding = " 0x7f0000001000 0x7f0000002000";
  for (const std::string bad : {"0x12g4", "0x", "0x12345678123456789", "0x1234\xc3\xa9",
                                 "0x7f00_0001", "0x7f0000001000x"}) {
    for (const std::string& line : {" " + bad + padding, padding + " " + bad}) {
      std::vector<uint64_t> stack;
      auto parsed = ParseStackAddresses(line, 128, stack);
      EXPECT_FALSE(parsed.has_value()) << line;
    }
  }
}

// The fast path alone (ParseStackAddresses falls back to the careful parse,
// which would hide a token the fast one refuses): every well-formed line.
TEST(ParseWellFormedStackTest, TakesEveryWellFormedLine) {
  std::mt19937_64 random(20261206);
  for (int round = 0; round < 20000; ++round) {
    const WellFormedLine line = RandomWellFormedLine(random, 6);
    std::vector<uint64_t> stack;
    ASSERT_TRUE(ParseWellFormedStack(line.text, 128, stack)) << line.text;
    EXPECT_EQ(stack, line.addresses) << line.text;
  }
}

// Every byte value in every place of a token of each length, with more of
// the line after it or not: the fast path takes the line only when the
// careful parse does, with the same addresses.
TEST(ParseWellFormedStackTest, AgreesWithTheCarefulParseOnEveryByte) {
  for (int digits = 1; digits <= 17; ++digits) {
    for (int place = 0; place < digits; ++place) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string token = HexToken(0x0123456789abcdefULL, std::min(digits, 16), byte % 2 == 0, 0);
        if (digits == 17) token += '7';
        token[2 + static_cast<size_t>(place)] = static_cast<char>(byte);
        for (const std::string& line :
             {" " + token, " " + token + " 0x7f0000001000 0x7f0000002000 0x7f0000003000"}) {
          std::vector<uint64_t> fast;
          std::vector<uint64_t> careful;
          const bool taken = ParseWellFormedStack(line, 128, fast);
          DumpScanner scanner(line);
          scanner.SkipBlanks();
          bool valid = true;
          while (valid && !scanner.AtEnd()) {
            auto address = scanner.Address();
            valid = address.has_value();
            if (valid) careful.push_back(*address);
            scanner.SkipBlanks();
          }
          const bool blank = byte == ' ' || byte == '\t';
          if (blank) continue;  // splits the token: another line, checked above
          EXPECT_EQ(taken, valid) << Excerpt(line);
          if (taken && valid) {
            EXPECT_EQ(fast, careful) << Excerpt(line);
          }
        }
      }
    }
  }
}

TEST(ParseStackAddressesTest, SixteenDigitsAreTheMost) {
  std::vector<uint64_t> stack;
  ASSERT_TRUE(ParseStackAddresses(" 0xffffffffff600000 0x1", 8, stack).has_value());
  EXPECT_EQ(stack, (std::vector<uint64_t>{0xffffffffff600000, 0x1}));
}

}  // namespace
}  // namespace memprof::report::parse
