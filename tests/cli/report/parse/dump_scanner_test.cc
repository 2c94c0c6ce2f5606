#include "cli/report/parse/dump_scanner.h"

#include <gtest/gtest.h>

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

// Every token length from 1 to 16 digits, in both cases, with and without
// "0x", separated by spaces and tabs, anywhere in lines long and short.
TEST(ParseStackAddressesTest, EveryDigitCountCaseAndPlaceInTheLine) {
  std::mt19937_64 random(20261128);
  for (int round = 0; round < 2000; ++round) {
    std::string line;
    std::vector<uint64_t> expected;
    const int tokens = 1 + static_cast<int>(random() % 12);
    for (int t = 0; t < tokens; ++t) {
      const int digits = 1 + static_cast<int>(random() % 16);
      const uint64_t value = digits == 16 ? random() : random() & ((uint64_t{1} << (4 * digits)) - 1);
      line += std::string(1 + random() % 2, random() % 4 == 0 ? '\t' : ' ');
      line += HexToken(value, digits, random() % 2 == 0, static_cast<int>(random() % 3));
      expected.push_back(value);
    }
    if (random() % 2 == 0) line += ' ';
    std::vector<uint64_t> stack;
    ASSERT_TRUE(ParseStackAddresses(line, 128, stack).has_value()) << line;
    EXPECT_EQ(stack, expected) << line;
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

TEST(ParseStackAddressesTest, SixteenDigitsAreTheMost) {
  std::vector<uint64_t> stack;
  ASSERT_TRUE(ParseStackAddresses(" 0xffffffffff600000 0x1", 8, stack).has_value());
  EXPECT_EQ(stack, (std::vector<uint64_t>{0xffffffffff600000, 0x1}));
}

}  // namespace
}  // namespace memprof::report::parse
