#include "cli/report/parse/gperftools_parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/parse/heap_dump_reader.h"
#include "tests/cli/report/parse/gperftools_profiles.h"

namespace memprof::report::parse {
namespace {

using testing::kHeapProfile;
using testing::kHeapSample;

TEST(GperftoolsParserTest, ParsesTheHeapProfilersProfile) {
  auto dump = ParseGperftoolsText(kHeapProfile, "t.prof");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->format, DumpFormat::kGperftoolsHeapProfile);
  EXPECT_EQ(dump->sample_period, 1u);
  EXPECT_EQ(dump->totals.inuse.objects, 3u);
  EXPECT_EQ(dump->totals.alloc.bytes, 1003072u);
  EXPECT_TRUE(dump->threads.empty());
  ASSERT_EQ(dump->records.size(), 3u);
  EXPECT_EQ(dump->records[0].stack, (std::vector<uint64_t>{0x401000, 0x402000, 0x403000}));
  EXPECT_EQ(dump->records[1].counts.inuse.bytes, 1024u);
  EXPECT_EQ(dump->records[2].counts.inuse.objects, 0u);
  EXPECT_EQ(dump->records[2].counts.alloc.objects, 1000u);
  ASSERT_EQ(dump->mapped_libraries.size(), 1u);
  EXPECT_EQ(dump->mapped_libraries[0].substr(0, 17), "00400000-00410000");
}

TEST(GperftoolsParserTest, ParsesTheSamplersProfileWithoutAccumulatedCounts) {
  auto dump = ParseGperftoolsText(kHeapSample, "t.prof");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->format, DumpFormat::kGperftoolsHeapSample);
  EXPECT_EQ(dump->sample_period, 524288u);
  EXPECT_EQ(dump->totals.inuse.bytes, 2101248u);
  EXPECT_EQ(dump->totals.alloc.objects, 0u);  // the brackets only repeat the counts
  ASSERT_EQ(dump->records.size(), 3u);
  EXPECT_EQ(dump->records[2].counts.inuse.bytes, 4096u);
  EXPECT_EQ(dump->records[2].counts.alloc.bytes, 0u);
}

TEST(GperftoolsParserTest, StreamAndInPlaceParsesAgree) {
  std::istringstream in(kHeapProfile);
  auto streamed = ParseGperftools(in, "t.prof");
  auto in_place = ParseGperftoolsText(kHeapProfile, "t.prof");
  ASSERT_TRUE(streamed.has_value() && in_place.has_value());
  ASSERT_EQ(streamed->records.size(), in_place->records.size());
  for (size_t i = 0; i < streamed->records.size(); ++i) {
    EXPECT_EQ(streamed->records[i].stack, in_place->records[i].stack);
    EXPECT_EQ(streamed->records[i].counts.alloc.bytes, in_place->records[i].counts.alloc.bytes);
  }
  EXPECT_EQ(streamed->mapped_libraries, in_place->mapped_libraries);
}

TEST(GperftoolsParserTest, AcceptsObjectsOfZeroBytesFromMallocOfZero) {
  auto dump = ParseGperftoolsText(
      "heap profile: 1: 0 [1: 0] @ heapprofile\n1: 0 [1: 0] @ 0x1\n\nMAPPED_LIBRARIES:\n", "t");
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  EXPECT_EQ(dump->records[0].counts.inuse.objects, 1u);
}

TEST(HeapDumpReaderTest, TellsTheFormatsApartByTheFirstLine) {
  auto gperftools = ParseHeapDumpText(kHeapSample, "t");
  ASSERT_TRUE(gperftools.has_value()) << gperftools.error().message;
  EXPECT_EQ(gperftools->format, DumpFormat::kGperftoolsHeapSample);
  auto jemalloc =
      ParseHeapDumpText("heap_v2/524288\n  t*: 1: 64 [0: 0]\n@ 0x1\n  t*: 1: 64 [0: 0]\n\n"
                        "MAPPED_LIBRARIES:\n",
                        "t");
  ASSERT_TRUE(jemalloc.has_value()) << jemalloc.error().message;
  EXPECT_EQ(jemalloc->format, DumpFormat::kJemalloc);
  EXPECT_EQ(jemalloc->records.size(), 1u);
}

TEST(HeapDumpReaderTest, AnUnknownFirstLineNamesBothFormats) {
  auto dump = ParseHeapDumpText("--- heapz 1 ---\n", "x.heap");
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(dump.error().message,
            "x.heap:1: not a heap profile: expected jemalloc's 'heap_v2/<sample period>' or "
            "gperftools' 'heap profile: ...' header, got '--- heapz 1 ---'");
}

TEST(HeapDumpReaderTest, AnEmptyFileNamesBothFormats) {
  auto dump = ParseHeapDumpText("", "x.heap");
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().message,
            "x.heap:1: empty input: expected a heap profile, jemalloc's 'heap_v2/<sample "
            "period>' or gperftools' 'heap profile: ...'");
}

TEST(GperftoolsParserTest, TheObserverSeesEveryStackInOrder) {
  std::vector<std::vector<uint64_t>> seen;
  auto dump = ParseHeapDumpText(
      kHeapProfile, "x.prof", {},
      [&seen](std::span<const uint64_t> stack) { seen.emplace_back(stack.begin(), stack.end()); });
  ASSERT_TRUE(dump.has_value()) << dump.error().message;
  ASSERT_EQ(seen.size(), dump->records.size());
  ASSERT_FALSE(seen.empty());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], dump->records[i].stack);
}

TEST(HeapDumpReaderTest, AMissingFileIsAnError) {
  auto dump = ParseHeapDumpFile("/nonexistent/memprof/x.prof");
  ASSERT_FALSE(dump.has_value());
  EXPECT_NE(dump.error().message.find("/nonexistent/memprof/x.prof"), std::string::npos);
}

// A file that opens but cannot be read: /proc/self/mem at offset 0 (nothing
// is mapped there) fails with EIO. Not an empty input: data was lost.
TEST(HeapDumpReaderTest, AFileThatCannotBeReadSaysWhy) {
  auto dump = ParseHeapDumpFile("/proc/self/mem");
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(dump.error().message,
            "/proc/self/mem: cannot read the heap profile: Input/output error");
}

// And the same file and the same error when it is a jemalloc dump's only parser.
TEST(HeapDumpReaderTest, AFileThatCannotBeReadIsAReadErrorOfTheParser) {
  auto dump = ParseHeapV2File("/proc/self/mem");
  ASSERT_FALSE(dump.has_value());
  EXPECT_EQ(dump.error().code, ErrorCode::kDataLoss);
  EXPECT_EQ(dump.error().message, "/proc/self/mem:1: read error");
}

}  // namespace
}  // namespace memprof::report::parse
