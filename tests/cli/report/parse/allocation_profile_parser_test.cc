#include "cli/report/parse/allocation_profile_parser.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/report/parse/test_util.h"

namespace memprof::report::parse {
namespace {

constexpr const char* kHeader =
    "memprof allocation profile v1\n"
    "pid: 4242\n"
    "created_unix_ms: 1700000001000\n"
    "window_start_unix_ms: 1700000000000\n"
    "window_requested_ms: 1000\n"
    "window_start_ns: 1000000000\n"
    "window_end_ns: 2000000000\n"
    "clock: realtime\n"
    "clock_resolution_ns: 1\n"
    "sample_interval: 1024\n"
    "record_bound: 100\n"
    "an_unknown_key: is ignored\n"
    "--- recent allocations\n";

constexpr const char* kRecords =
    R"({"sample_interval":1024,"recent_alloc_max":100,"recent_alloc":[)"
    R"({"size":4000,"usize":4096,"released":true,"alloc_thread_uid":0,"alloc_time":1100000000,)"
    R"("alloc_trace":["0x401010","0x401020"],"dalloc_thread_uid":2,"dalloc_time":1100500000,)"
    R"("dalloc_trace":["0x401030"]},)"
    R"({"size":100,"usize":112,"released":false,"alloc_thread_uid":3,)"
    R"("alloc_thread_name":"worker","alloc_time":1200000000,"alloc_trace":["0x401040"]},)"
    R"({"size":64,"usize":64,"released":true,"alloc_thread_uid":1,"alloc_time":1300000000,)"
    R"("alloc_trace":["0x401010","0x401020"]}]})"
    "\n";

constexpr const char* kMaps =
    "MAPPED_LIBRARIES:\n"
    "00400000-00402000 r-xp 00000000 08:01 1234 /usr/bin/app\n"
    "--- end\n";

std::string Profile() { return std::string(kHeader) + kRecords + kMaps; }

// `text` with its first `from` replaced by `to` (which must be there).
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string ErrorOf(const std::string& text) {
  auto parsed = ParseAllocationProfileText(text, "a.prof");
  EXPECT_FALSE(parsed.has_value());
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  return parsed.error().message;
}

TEST(AllocationProfileParserTest, ReadsHeaderRecordsAndMaps) {
  auto parsed = ParseAllocationProfileText(Profile(), "a.prof");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  const AllocationProfileHeader& header = parsed->header;
  EXPECT_EQ(header.pid, 4242u);
  EXPECT_EQ(header.created_unix_ms, 1700000001000);
  EXPECT_EQ(header.window_start_unix_ms, 1700000000000);
  EXPECT_EQ(header.window_ns(), 1000000000u);
  EXPECT_EQ(header.clock, "realtime");
  EXPECT_EQ(header.sample_interval, 1024u);
  EXPECT_EQ(header.record_bound, 100u);
  EXPECT_EQ(header.ended_by, WindowEnd::kDuration);  // the default
  EXPECT_FALSE(header.records_lost);
  ASSERT_EQ(parsed->records.size(), 3u);
  const AllocationRecord& freed = parsed->records[0];
  EXPECT_EQ(freed.size, 4000u);
  EXPECT_EQ(freed.usize, 4096u);
  EXPECT_TRUE(freed.released);
  EXPECT_EQ(freed.alloc_time_ns, 1100000000u);
  EXPECT_EQ(freed.dalloc_time_ns, 1100500000u);
  EXPECT_EQ(freed.dalloc_thread_uid, 2u);
  EXPECT_EQ(freed.alloc_stack, (std::vector<uint64_t>{0x401010, 0x401020}));
  EXPECT_EQ(freed.dalloc_stack, (std::vector<uint64_t>{0x401030}));
  const AllocationRecord& live = parsed->records[1];
  EXPECT_FALSE(live.released);
  EXPECT_EQ(live.alloc_thread_uid, 3u);
  EXPECT_FALSE(live.dalloc_time_ns.has_value());
  EXPECT_TRUE(parsed->records[2].released);  // freed, time unknown
  EXPECT_FALSE(parsed->records[2].dalloc_time_ns.has_value());
  EXPECT_EQ(parsed->mapped_libraries,
            (std::vector<std::string>{"00400000-00402000 r-xp 00000000 08:01 1234 /usr/bin/app"}));
}

TEST(AllocationProfileParserTest, ReadsOptionalHeaderKeys) {
  std::string text = Replace(Profile(), "record_bound: 100\n",
                             "record_bound: 100\nended_by: bound\nrecords_lost: 1\n");
  auto parsed = ParseAllocationProfileText(text, "a.prof");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(parsed->header.ended_by, WindowEnd::kBound);
  EXPECT_TRUE(parsed->header.records_lost);
}

TEST(AllocationProfileParserTest, RecognizesItsFirstLine) {
  EXPECT_TRUE(LooksLikeAllocationProfile(Profile()));
  EXPECT_TRUE(LooksLikeAllocationProfile("memprof allocation profile v7\n"));
  EXPECT_FALSE(LooksLikeAllocationProfile("heap_v2/524288\n"));
}

TEST(AllocationProfileParserTest, ReadsAGzippedFile) {
  const std::string path = ::testing::TempDir() + "/alloc.prof.gz";
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const std::string text = Profile();
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(file);
  EXPECT_TRUE(IsAllocationProfileFile(path));
  auto parsed = ParseAllocationProfileFile(path);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(parsed->records.size(), 3u);
  std::filesystem::remove(path);
}

TEST(AllocationProfileParserTest, AFileWithoutTheEndLineIsTruncated) {
  const std::string text = std::string(kHeader) + kRecords + "MAPPED_LIBRARIES:\n";
  EXPECT_EQ(ErrorOf(text), "a.prof:15: input ends without the final '--- end' line: truncated at "
                           "byte " + std::to_string(text.size()) + " (line 15)");
}

TEST(AllocationProfileParserTest, AJsonLineCutShortIsTruncated) {
  const std::string text = std::string(kHeader) + std::string(kRecords).substr(0, 120);
  EXPECT_EQ(ErrorOf(text), "a.prof:14: the recent allocations JSON line is cut short: truncated "
                           "at byte " + std::to_string(text.size()) + " (line 14)");
}

TEST(AllocationProfileParserTest, AHeaderWithoutRecordsIsTruncated) {
  EXPECT_EQ(ErrorOf("memprof allocation profile v1\npid: 1\n"),
            "a.prof:2: input ends in the header, before '--- recent allocations': truncated at "
            "byte 37 (line 2)");
}

TEST(AllocationProfileParserTest, InvalidJsonSaysWhereInTheLine) {
  const std::string text = Replace(Profile(), R"("released":false)", R"("released":fals)");
  EXPECT_EQ(ErrorOf(text).substr(0, 66),
            "a.prof:14: the recent allocations JSON is invalid at byte 304 of t");
}

TEST(AllocationProfileParserTest, AQuoteInAThreadNameIsExplained) {
  const std::string message = ErrorOf(Replace(Profile(), R"("worker")", R"("wo"rker")"));
  EXPECT_NE(message.find("a.prof:14: the recent allocations JSON is invalid at byte"),
            std::string::npos) << message;
  EXPECT_NE(message.find("jemalloc does not escape thread names"), std::string::npos) << message;
}

TEST(AllocationProfileParserTest, AMissingRequiredHeaderKeyIsNamed) {
  EXPECT_EQ(ErrorOf(Replace(Profile(), "sample_interval: 1024\n", "")),
            "a.prof:12: the header lacks the required key 'sample_interval'");
}

TEST(AllocationProfileParserTest, AMalformedHeaderValueIsNamed) {
  EXPECT_EQ(ErrorOf(Replace(Profile(), "pid: 4242", "pid: 42x")),
            "a.prof:2: header key 'pid': expected a non-negative decimal number, got '42x'");
  EXPECT_EQ(ErrorOf(Replace(Profile(), "record_bound: 100\n", "record_bound: 100\nended_by: ok\n")),
            "a.prof:12: header key 'ended_by': expected duration, bound or client, got 'ok'");
}

TEST(AllocationProfileParserTest, ABadHexAddressIsNamed) {
  EXPECT_EQ(ErrorOf(Replace(Profile(), R"("0x401040")", R"("0x40zz40")")),
            "a.prof:14: record 1 of recent_alloc: bad address in \"alloc_trace\": "
            "'\"0x40zz40\"' (expected \"0x<hex>\")");
}

TEST(AllocationProfileParserTest, ARecordWithoutARequiredFieldIsNamed) {
  EXPECT_EQ(ErrorOf(Replace(Profile(), R"("usize":112,)", "")),
            "a.prof:14: record 1 of recent_alloc lacks \"usize\"");
}

TEST(AllocationProfileParserTest, AnotherVersionIsUnsupported) {
  EXPECT_EQ(ErrorOf(Replace(Profile(), "profile v1", "profile v2")),
            "a.prof:1: unsupported version 2 of the allocation profile format (this memprofctl "
            "reads version 1; a newer memprofctl reads it)");
}

TEST(AllocationProfileParserTest, DisagreeingSampleIntervalsAreCorrupt) {
  EXPECT_EQ(ErrorOf(Replace(Profile(), R"({"sample_interval":1024)", R"({"sample_interval":2048)")),
            "a.prof:14: the JSON's sample_interval 2048 differs from the header's 1024");
}

TEST(AllocationProfileParserTest, TextAfterTheEndIsCorrupt) {
  EXPECT_EQ(ErrorOf(Profile() + "more\n"), "a.prof:18: unexpected text after '--- end'");
}

}  // namespace
}  // namespace memprof::report::parse
