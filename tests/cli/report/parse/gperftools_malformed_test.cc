// Every way a gperftools heap profile can be broken gives one Error naming
// the line and what is wrong, never a crash; the same through the stream
// parser, the in-place parser and the format detection in front of them.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli/report/parse/gperftools_parser.h"
#include "cli/report/parse/heap_dump_reader.h"
#include "tests/cli/report/parse/test_util.h"

namespace memprof::report::parse {
namespace {

using testing::kBad;
using testing::Limits;
using testing::MalformedCase;

const std::string kGperfHead = "heap profile:    1:   64 [   1:   64] @ heapprofile\n";
const std::string kGperfTail = "\nMAPPED_LIBRARIES:\n";

const MalformedCase kGperfCases[] = {
    {"UnknownKind", "heap profile: 1: 64 [1: 64] @ heap\n", kBad,
     "t.prof:1: unknown gperftools profile kind 'heap': expected 'heapprofile' or "
     "'heap_v2/<sample period>'"},
    {"NoKind", "heap profile: 1: 64 [1: 64] @\n", kBad,
     "t.prof:1: unknown gperftools profile kind '': expected 'heapprofile' or "
     "'heap_v2/<sample period>'"},
    {"NoAtInHeader", "heap profile: 1: 64 [1: 64] heapprofile\n", kBad,
     "t.prof:1: expected '@' after the totals, got 'heapprofile'"},
    {"NoPeriod", "heap profile: 1: 64 [1: 64] @ heap_v2/\n", kBad,
     "t.prof:1: expected the sample period after 'heap_v2/', got ''"},
    {"PeriodJunk", "heap profile: 1: 64 [1: 64] @ heap_v2/512k\n", kBad,
     "t.prof:1: unexpected text after the sample period: 'k'"},
    {"PeriodOverflow", "heap profile: 1: 64 [1: 64] @ heap_v2/18446744073709551616\n", kBad,
     "t.prof:1: the sample period after 'heap_v2/' does not fit in 64 bits"},
    {"HeaderCountsJunk", "heap profile: x: 64 [1: 64] @ heapprofile\n", kBad,
     "t.prof:1: expected in-use object count, got 'x: 64 [1: 64] @ heapprofile'"},
    {"HeaderWithoutNewline", "heap profile: 1: 64 [1: 64] @ heapprofile", kBad,
     "t.prof:1: input ends in the middle of this line: truncated at byte 41 (line 1)"},
    {"HeaderOnly", kGperfHead, kBad,
     "t.prof:1: input ends without the MAPPED_LIBRARIES section: truncated at byte 52 (line 1)"},
    {"NegativeCount", kGperfHead + "  -1: -64 [1: 64] @ 0x1\n", kBad,
     "t.prof:2: expected in-use object count, got '-1: -64 [1: 64] @ 0x1'"},
    {"BytesInZeroObjects", kGperfHead + "  0: 64 [1: 64] @ 0x1\n", kBad,
     "t.prof:2: in-use counts have 64 bytes in 0 objects"},
    {"AccumulatedOverflow", kGperfHead + "  1: 64 [1: 18446744073709551616] @ 0x1\n", kBad,
     "t.prof:2: accumulated byte count does not fit in 64 bits"},
    {"MissingBracket", kGperfHead + "  1: 64 1: 64] @ 0x1\n", kBad,
     "t.prof:2: expected '[' before the accumulated counts, got '1: 64] @ 0x1'"},
    {"MissingAt", kGperfHead + "  1: 64 [1: 64] 0x1\n", kBad,
     "t.prof:2: expected '@' before the stack, got '0x1'"},
    {"StackWithoutAddresses", kGperfHead + "  1: 64 [1: 64] @\n", kBad,
     "t.prof:2: stack line '@' has no addresses"},
    {"BadAddress", kGperfHead + "  1: 64 [1: 64] @ 0x1 0xzz\n", kBad,
     "t.prof:2: bad stack address '0xzz'"},
    {"NilAddress", kGperfHead + "  1: 64 [1: 64] @ (nil)\n", kBad,
     "t.prof:2: bad stack address '(nil)'"},
    {"JemallocLineInside", kGperfHead + "@ 0x1\n", kBad,
     "t.prof:2: expected in-use object count, got '@ 0x1'"},
    {"TooManyFrames", kGperfHead + "  1: 64 [1: 64] @ 0x1 0x2 0x3\n", kBad,
     "t.prof:2: stack has more than 2 frames", Limits(1024, 2, 10, 10)},
    {"TooManyStacks", kGperfHead + "  1: 64 [1: 64] @ 0x1\n  1: 64 [1: 64] @ 0x2\n", kBad,
     "t.prof:3: more than 1 stacks", Limits(1024, 4, 1, 10)},
    {"TooManyMapsLines", kGperfHead + kGperfTail + "a\nb\n", kBad,
     "t.prof:5: more than 1 MAPPED_LIBRARIES lines", Limits(1024, 4, 10, 1)},
    {"LineTooLong", kGperfHead + "  1: 64 [1: 64] @" + std::string(100, ' ') + "0x1\n", kBad,
     "t.prof:2: line is longer than 80 bytes", Limits(80, 4, 10, 10)},
    {"NulByte", kGperfHead + std::string("  1: 64 [1: 64] @ 0x1\0\n", 23), kBad,
     "t.prof:2: NUL byte in line (binary data?)"},
    {"TruncatedInStack", kGperfHead + "  1: 64 [1: 64] @ 0x1 0x7f", kBad,
     "t.prof:2: input ends in the middle of this line: truncated at byte 78 (line 2)"},
    {"NoMapsSection", kGperfHead + "  1: 64 [1: 64] @ 0x1\n\n", kBad,
     "t.prof:3: input ends without the MAPPED_LIBRARIES section: truncated at byte 75 (line 3)"},
};

void ExpectError(const Result<HeapDump>& dump, const MalformedCase& c) {
  ASSERT_FALSE(dump.has_value()) << "accepted: " << c.name;
  EXPECT_EQ(dump.error().message, c.message);
  EXPECT_EQ(dump.error().code, c.code) << dump.error().message;
}

class MalformedGperftoolsTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedGperftoolsTest, FailsWithTheLineAndWhatIsWrong) {
  const MalformedCase& c = GetParam();
  std::istringstream in(c.input);
  ExpectError(ParseGperftools(in, "t.prof", c.limits), c);
}

TEST_P(MalformedGperftoolsTest, FailsAlikeWhenParsedInPlace) {
  const MalformedCase& c = GetParam();
  ExpectError(ParseGperftoolsText(c.input, "t.prof", c.limits), c);
}

TEST_P(MalformedGperftoolsTest, FailsAlikeBehindTheFormatDetection) {
  const MalformedCase& c = GetParam();
  ExpectError(ParseHeapDumpText(c.input, "t.prof", c.limits), c);
}

TEST_P(MalformedGperftoolsTest, FailsAlikeWhenReadFromAFile) {
  const MalformedCase& c = GetParam();
  auto parse = [](FileLineReader& reader, std::string_view source, const ParseLimits& limits) {
    return ParseGperftoolsLines(reader, source, limits);
  };
  ExpectError(testing::ParseThroughFile(c.input, "t.prof", c.limits, parse), c);
}

INSTANTIATE_TEST_SUITE_P(Parser, MalformedGperftoolsTest, ::testing::ValuesIn(kGperfCases),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(MalformedGperftoolsTest, EmptyInputNamesTheExpectedHeader) {
  std::istringstream in("");
  auto dump = ParseGperftools(in, "t.prof");
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().message, "t.prof:1: empty input: expected a 'heap profile: ...' header");
}

TEST(MalformedGperftoolsTest, AJemallocDumpIsNotAGperftoolsProfile) {
  auto dump = ParseGperftoolsText("heap_v2/524288\n", "t.prof");
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().message,
            "t.prof:1: not a gperftools heap profile: expected a 'heap profile: ...' header, got "
            "'heap_v2/524288'");
}

}  // namespace
}  // namespace memprof::report::parse
