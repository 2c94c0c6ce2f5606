// Every way a dump can be broken gives one Error naming the line and what is
// wrong, never a crash. Each case asserts the code and the whole message.
#include <gtest/gtest.h>

#include <string>

#include "cli/report/parse/heap_v2_parser.h"
#include "tests/cli/report/parse/test_util.h"

namespace memprof::report::parse {
namespace {

using testing::kBad;
using testing::Limits;
using testing::MalformedCase;
using testing::ParseText;

// Lines 1-2 of a valid dump, and its valid end.
const std::string kHead = "heap_v2/524288\n  t*: 1: 64 [0: 0]\n";
const std::string kTail = "\nMAPPED_LIBRARIES:\n";
// A stack into a library, and the maps line of the executable, below it.
const std::string kStack = "@ 0x55d000000100 0x7f0000001234\n  t*: 1: 64 [0: 0]\n";
const std::string kAppMap = "55d000000000-55d000001000 r-xp 00000000 08:02 1 /usr/bin/app\n";

const MalformedCase kCases[] = {
    {"Empty", "", kBad, "t.heap:1: empty input: expected a 'heap_v2/<sample period>' header"},
    {"OtherVersion", "heap_v1/5\n", kBad,
     "t.heap:1: not a jemalloc heap profile: expected a 'heap_v2/<sample period>' header, got "
     "'heap_v1/5'"},
    {"GperftoolsHeader", "heap profile: 1: 2 [3: 4] @ heap_v2/524288\n", kBad,
     "t.heap:1: not a jemalloc heap profile: expected a 'heap_v2/<sample period>' header, got "
     "'heap profile: 1: 2 [3: 4] @ heap_v2/5242...'"},
    {"BinaryFile",
     std::string("\x7f"
                 "ELF\x02\x01\x01\n",
                 8),
     kBad,
     "t.heap:1: not a jemalloc heap profile: expected a 'heap_v2/<sample period>' header, got "
     "'\\x7fELF\\x02\\x01\\x01'"},
    {"NoPeriod", "heap_v2/\n", kBad,
     "t.heap:1: expected the sample period after 'heap_v2/', got ''"},
    {"NegativePeriod", "heap_v2/-1\n", kBad,
     "t.heap:1: expected the sample period after 'heap_v2/', got '-1'"},
    {"PeriodOverflow", "heap_v2/18446744073709551616\n", kBad,
     "t.heap:1: the sample period after 'heap_v2/' does not fit in 64 bits"},
    {"PeriodJunk", "heap_v2/512k\n", kBad,
     "t.heap:1: unexpected text after the sample period: 'k'"},
    {"HeaderOnly", "heap_v2/512\n", kBad,
     "t.heap:1: input ends after the header, before the 't*:' totals: truncated at byte 12 "
     "(line 1)"},
    {"HeaderWithoutNewline", "heap_v2/512", kBad,
     "t.heap:1: input ends in the middle of this line: truncated at byte 11 (line 1)"},
    {"NoTotals", "heap_v2/512\n@ 0x1\n", kBad,
     "t.heap:2: expected the 't*:' totals line after the header, got '@ 0x1'"},
    {"TotalsOfAThread", "heap_v2/512\n  t0: 1: 64 [0: 0]\n", kBad,
     "t.heap:2: expected 't*:', got 't0: 1: 64 [0: 0]'"},
    {"BadObjectCount", "heap_v2/512\n  t*: x: 64 [0: 0]\n", kBad,
     "t.heap:2: expected in-use object count, got 'x: 64 [0: 0]'"},
    {"NegativeByteCount", "heap_v2/512\n  t*: 1: -64 [0: 0]\n", kBad,
     "t.heap:2: expected in-use byte count, got '-64 [0: 0]'"},
    {"MissingColon", "heap_v2/512\n  t*: 1 64 [0: 0]\n", kBad,
     "t.heap:2: expected ':' after the object count, got '64 [0: 0]'"},
    {"MissingBracket", "heap_v2/512\n  t*: 1: 64 0: 0]\n", kBad,
     "t.heap:2: expected '[' before the accumulated counts, got '0: 0]'"},
    {"MissingCloseBracket", "heap_v2/512\n  t*: 1: 64 [0: 0\n", kBad,
     "t.heap:2: expected ']' after the accumulated counts, got ''"},
    {"BytesInZeroObjects", "heap_v2/512\n  t*: 0: 64 [0: 0]\n", kBad,
     "t.heap:2: in-use counts have 64 bytes in 0 objects"},
    {"ObjectsOfZeroBytes", kHead + "@ 0x1\n  t*: 3: 0 [0: 0]\n", kBad,
     "t.heap:4: in-use counts have 3 objects of 0 bytes"},
    {"CountOverflow", "heap_v2/512\n  t*: 99999999999999999999: 64 [0: 0]\n", kBad,
     "t.heap:2: in-use object count does not fit in 64 bits"},
    {"AccumulatedOverflow", kHead + "@ 0x1\n  t*: 1: 64 [1: 18446744073709551616]\n", kBad,
     "t.heap:4: accumulated byte count does not fit in 64 bits"},
    {"JunkAfterCounts", "heap_v2/512\n  t*: 1: 64 [0: 0]x\n", kBad,
     "t.heap:2: unexpected text after the counts: 'x'"},
    {"NameOnAStacksThreadLine", kHead + "@ 0x1\n  t*: 1: 64 [0: 0]\n  t3: 1: 64 [0: 0] name\n",
     kBad, "t.heap:5: unexpected text after the counts: 'name'"},
    {"BadThreadNumber", kHead + "  tx: 1: 64 [0: 0]\n", kBad,
     "t.heap:3: expected a thread number after 't', got 'x: 1: 64 [0: 0]'"},
    {"ThreadNumberOverflow", kHead + "  t18446744073709551616: 1: 64 [0: 0]\n", kBad,
     "t.heap:3: a thread number after 't' does not fit in 64 bits"},
    {"TotalsTwice", kHead + "  t*: 1: 64 [0: 0]\n", kBad,
     "t.heap:3: 't*:' line without a '@' stack line before it"},
    {"StackWithoutCounts", kHead + "@ 0x1\n@ 0x2\n  t*: 1: 64 [0: 0]\n", kBad,
     "t.heap:4: expected the 't*:' counts of the stack at line 3, got '@ 0x2'"},
    {"StackWithOnlyAThreadLine", kHead + "@ 0x1\n  t0: 1: 64 [0: 0]\n", kBad,
     "t.heap:4: expected the 't*:' counts of the stack at line 3, got 't0: 1: 64 [0: 0]'"},
    {"StackWithoutCountsBeforeMaps", kHead + "@ 0x1\n" + kTail, kBad,
     "t.heap:4: expected the 't*:' counts of the stack at line 3, got ''"},
    {"StackWithoutCountsAtEnd", kHead + "@ 0x1\n", kBad,
     "t.heap:3: stack has no 't*:' counts line: truncated at byte 40 (line 3)"},
    {"StackWithoutAddresses", kHead + "@\n", kBad, "t.heap:3: stack line '@' has no addresses"},
    {"BadAddress", kHead + "@ 0x1 0xzz\n", kBad, "t.heap:3: bad stack address '0xzz'"},
    {"BareHexPrefix", kHead + "@ 0x\n", kBad, "t.heap:3: bad stack address '0x'"},
    {"AddressTooLong", kHead + "@ 0x11112222333344445\n", kBad,
     "t.heap:3: bad stack address '0x11112222333344445'"},
    {"NegativeAddress", kHead + "@ -0x1\n", kBad, "t.heap:3: bad stack address '-0x1'"},
    {"TooManyFrames", kHead + "@ 0x1 0x2 0x3 0x4 0x5\n", kBad,
     "t.heap:3: stack has more than 4 frames", Limits(1024, 4, 10, 10)},
    {"TooManyStacks", kHead + "@ 0x1\n  t*: 1: 64 [0: 0]\n@ 0x2\n", kBad,
     "t.heap:5: more than 1 stacks", Limits(1024, 4, 1, 10)},
    {"TooManyMapsLines", kHead + kTail + "a\nb\n", kBad,
     "t.heap:6: more than 1 MAPPED_LIBRARIES lines", Limits(1024, 4, 10, 1)},
    {"LineTooLong", kHead + "@" + std::string(100, ' ') + "0x1\n", kBad,
     "t.heap:3: line is longer than 64 bytes", Limits(64, 4, 10, 10)},
    {"NoNewlineForAGigabyte", kHead + std::string(200, 'x'), kBad,
     "t.heap:3: line is longer than 64 bytes", Limits(64, 4, 10, 10)},
    {"NulByte", kHead + std::string("@ 0x1\0 0x2\n", 11), kBad,
     "t.heap:3: NUL byte in line (binary data?)"},
    {"NulByteInMaps", kHead + kTail + std::string("a\0b\n", 4), kBad,
     "t.heap:5: NUL byte in line (binary data?)"},
    {"JunkLine", kHead + "hello\n", kBad, "t.heap:3: unexpected line 'hello'"},
    {"TruncatedInCounts", kHead + "@ 0x1\n  t*: 1: 6", kBad,
     "t.heap:4: input ends in the middle of this line: truncated at byte 50 (line 4)"},
    {"TruncatedInStack", kHead + "@ 0x1 0x7f", kBad,
     "t.heap:3: input ends in the middle of this line: truncated at byte 44 (line 3)"},
    {"NoMapsSection", kHead + "@ 0x1\n  t*: 1: 64 [0: 0]\n", kBad,
     "t.heap:4: input ends without the MAPPED_LIBRARIES section: truncated at byte 59 (line 4)"},
    {"NoMapsSectionAfterHeader", kHead, kBad,
     "t.heap:2: input ends without the MAPPED_LIBRARIES section: truncated at byte 34 (line 2)"},
    // Cut inside the maps section: 95% of a real dump, so where a cut most
    // likely falls.
    {"MapsMarkerWithoutNewline", kHead + "\nMAPPED_LIBRARIES:", kBad,
     "t.heap:4: input ends in the middle of this line: truncated at byte 52 (line 4)"},
    {"TruncatedInMaps", kHead + kStack + kTail + kAppMap + "7f0000000000-7f00", kBad,
     "t.heap:8: input ends in the middle of this line: truncated at byte 182 (line 8)"},
    {"MapsCutAtALine", kHead + kStack + kTail + kAppMap, kBad,
     "t.heap:7: stack address 0x7f0000001234 lies above the last mapping of the "
     "MAPPED_LIBRARIES section (the section is cut short): truncated at byte 165 (line 7)"},
};

class MalformedDumpTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedDumpTest, FailsWithTheLineAndWhatIsWrong) {
  const MalformedCase& c = GetParam();
  auto dump = ParseText(c.input, c.limits);
  ASSERT_FALSE(dump.has_value()) << "accepted: " << c.name;
  EXPECT_EQ(dump.error().message, c.message);
  EXPECT_EQ(dump.error().code, c.code) << dump.error().message;
}

// A mapped file is parsed in place by another line splitter: same errors.
TEST_P(MalformedDumpTest, FailsAlikeWhenParsedInPlace) {
  const MalformedCase& c = GetParam();
  auto dump = ParseHeapV2Text(c.input, "t.heap", c.limits);
  ASSERT_FALSE(dump.has_value()) << "accepted: " << c.name;
  EXPECT_EQ(dump.error().message, c.message);
  EXPECT_EQ(dump.error().code, c.code) << dump.error().message;
}

TEST_P(MalformedDumpTest, FailsAlikeWhenReadFromAFile) {
  const MalformedCase& c = GetParam();
  auto parse = [](FileLineReader& reader, std::string_view source, const ParseLimits& limits) {
    return ParseHeapV2Lines(reader, source, limits);
  };
  auto dump = testing::ParseThroughFile(c.input, "t.heap", c.limits, parse);
  ASSERT_FALSE(dump.has_value()) << "accepted: " << c.name;
  EXPECT_EQ(dump.error().message, c.message);
  EXPECT_EQ(dump.error().code, c.code) << dump.error().message;
}

INSTANTIATE_TEST_SUITE_P(Parser, MalformedDumpTest, ::testing::ValuesIn(kCases),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(MalformedDumpTest, CoversAtLeastTwentyFiveCases) { EXPECT_GE(std::size(kCases), 25u); }

}  // namespace
}  // namespace memprof::report::parse
