#include "cli/report/parse/heap_v2_parser.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/cli/report/parse/test_util.h"

namespace memprof::report::parse {
namespace {

using testing::DataPath;
using testing::ParseText;

TEST(HeapV2ParserTest, ParsesEveryRecordKindOfTheSmallFixture) {
  auto dump = ParseHeapV2File(DataPath("small.heap"));
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->sample_period, 524288u);
  EXPECT_EQ(dump->totals.inuse.objects, 6u);
  EXPECT_EQ(dump->totals.inuse.bytes, 1600u);
  EXPECT_EQ(dump->totals.alloc.objects, 9u);
  EXPECT_EQ(dump->totals.alloc.bytes, 2000u);
  ASSERT_EQ(dump->threads.size(), 2u);
  EXPECT_EQ(dump->threads[0].thread_id, 0u);
  EXPECT_EQ(dump->threads[0].name, "main thread");
  EXPECT_EQ(dump->threads[1].thread_id, 1u);
  EXPECT_EQ(dump->threads[1].counts.inuse.bytes, 400u);
  EXPECT_EQ(dump->threads[1].name, "");
  ASSERT_EQ(dump->records.size(), 3u);  // the parser does not merge
  EXPECT_EQ(dump->records[0].stack, (std::vector<uint64_t>{0x1000, 0x2000, 0x3000}));
  EXPECT_EQ(dump->records[1].stack, (std::vector<uint64_t>{0x1000, 0x2100}));
  EXPECT_EQ(dump->records[1].counts.inuse.objects, 2u);
  EXPECT_EQ(dump->records[1].counts.alloc.bytes, 400u);
  ASSERT_EQ(dump->mapped_libraries.size(), 2u);
  EXPECT_EQ(dump->mapped_libraries[1].substr(0, 25), "7f0000000000-7f0000001000");
}

TEST(HeapV2ParserTest, ParsesARealJemallocDump) {
  auto dump = ParseHeapV2File(DataPath("many_stacks_sampled.heap"));
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->sample_period, 1024u);
  EXPECT_EQ(dump->records.size(), 18u);
  EXPECT_FALSE(dump->mapped_libraries.empty());
  // Lines 4-5 of the fixture. (The header's t*: totals are not the sum of
  // the stacks' in a sampled dump, so the parser does not check that.)
  EXPECT_EQ(dump->records[0].stack.size(), 14u);
  EXPECT_EQ(dump->records[0].stack[0], 0x7fd8302a2630u);
  EXPECT_EQ(dump->records[0].counts.inuse.objects, 2u);
  EXPECT_EQ(dump->records[0].counts.inuse.bytes, 225u);
}

TEST(HeapV2ParserTest, AcceptsWhatJeprofAccepts) {
  // CRLF line ends, tabs and extra blanks, "0" for a null frame (jemalloc's
  // %#x), upper-case hex and empty lines. (Not maps without a final
  // newline: the kernel ends every maps line with one, so that is a cut.)
  auto dump = ParseText(
      "heap_v2/0\r\n\t t*:  2:\t128 [ 0: 0 ]  \r\n\n@  0x7F 0\t0xffffffffffffffff \r\n"
      "  t*: 2: 128 [0: 0]\r\n\r\nMAPPED_LIBRARIES:\r\nlast line\r\n");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->sample_period, 0u);
  ASSERT_EQ(dump->records.size(), 1u);
  EXPECT_EQ(dump->records[0].stack, (std::vector<uint64_t>{0x7f, 0, UINT64_MAX}));
  EXPECT_EQ(dump->records[0].counts.inuse.bytes, 128u);
  EXPECT_EQ(dump->mapped_libraries, (std::vector<std::string>{"last line"}));
}

// Only an address above the last mapping shows a cut maps section: one in a
// gap between mappings (code unmapped since) or below the first is legal.
TEST(HeapV2ParserTest, AcceptsStackAddressesOutsideMappingsBelowTheLast) {
  auto dump = ParseText(
      "heap_v2/1\n  t*: 1: 64 [0: 0]\n@ 0x10 0x3000 0x7f0000000fff\n  t*: 1: 64 [0: 0]\n"
      "\nMAPPED_LIBRARIES:\n1000-2000 r-xp 00000000 08:02 1 /a\n"
      "7f0000000000-7f0000001000 r-xp 00000000 08:02 2 /lib/b.so\n");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->mapped_libraries.size(), 2u);
}

// memprof's own sampler says on the line after the header what its profile
// covers; jeprof ignores the line (it reads only '@' and 't' lines there).
TEST(HeapV2ParserTest, ReadsTheSamplersCoverageLine) {
  auto dump = ParseText(
      "heap_v2/524288\n# memprof_sampler since_unix_ms=1764648000123 dropped=7 later_key=x\n"
      "  t*: 0: 0 [0: 0]\n\nMAPPED_LIBRARIES:\n");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  ASSERT_TRUE(dump->sampler.has_value());
  EXPECT_EQ(dump->sampler->since_unix_ms, 1764648000123);
  EXPECT_EQ(dump->sampler->dropped, 7u);
  auto plain = ParseText("heap_v2/524288\n  t*: 0: 0 [0: 0]\n\nMAPPED_LIBRARIES:\n");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->sampler.has_value());
}

TEST(HeapV2ParserTest, RejectsABadCoverageLineOrOneElsewhere) {
  auto bad = ParseText(
      "heap_v2/524288\n# memprof_sampler since_unix_ms=soon\n  t*: 0: 0 [0: 0]\n\n"
      "MAPPED_LIBRARIES:\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find(":2: "), std::string::npos) << bad.error().message;
  auto no_value = ParseText(
      "heap_v2/524288\n# memprof_sampler dropped\n  t*: 0: 0 [0: 0]\n\nMAPPED_LIBRARIES:\n");
  ASSERT_FALSE(no_value.has_value());
  EXPECT_NE(no_value.error().message.find("expected key=value"), std::string::npos)
      << no_value.error().message;
  auto late = ParseText(
      "heap_v2/524288\n  t*: 0: 0 [0: 0]\n# memprof_sampler dropped=1\n\nMAPPED_LIBRARIES:\n");
  ASSERT_FALSE(late.has_value());
  EXPECT_NE(late.error().message.find(":3: "), std::string::npos) << late.error().message;
}

TEST(HeapV2ParserTest, AnEmptyProfileIsValid) {
  auto dump = ParseText("heap_v2/524288\n  t*: 0: 0 [0: 0]\n\nMAPPED_LIBRARIES:\n");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_TRUE(dump->records.empty());
  EXPECT_TRUE(dump->mapped_libraries.empty());
}

TEST(HeapV2ParserTest, MapsLinesAreKeptRawEvenWhenTheyLookLikeRecords) {
  auto dump = ParseText("heap_v2/1\n  t*: 0: 0 [0: 0]\nMAPPED_LIBRARIES:\n@ 0x1\n  t*: x\n\n");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->mapped_libraries, (std::vector<std::string>{"@ 0x1", "  t*: x", ""}));
}

TEST(HeapV2ParserTest, ReadsLinesLongerThanTheReadBuffer) {
  std::string stack = "@";
  for (int i = 0; i < 1000; ++i) stack += " 0x7fffabcdef01";  // 15 KB
  ParseLimits limits;
  limits.max_frames = 1000;
  std::string text = "heap_v2/1\n  t*: 1: 8 [0: 0]\n" + stack + "\n  t*: 1: 8 [0: 0]\n";
  text += std::string(70000, '\n') + "MAPPED_LIBRARIES:\n";  // crosses buffer refills
  auto dump = ParseText(text, limits);
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->records[0].stack.size(), 1000u);
}

TEST(HeapV2ParserTest, MissingFileIsNotFound) {
  auto dump = ParseHeapV2File("/nonexistent/memprof/x.heap");
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(dump.error().message,
            "/nonexistent/memprof/x.heap: cannot open the heap profile: No such file or directory");
}

}  // namespace
}  // namespace memprof::report::parse
