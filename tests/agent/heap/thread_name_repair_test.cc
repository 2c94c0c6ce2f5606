#include "agent/heap/thread_name_repair.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace memprof::agent {
namespace {

void AppendTo(void* out, const char* text) { static_cast<std::string*>(out)->append(text); }

// What ThreadNameRepair passes on for `text`, handed to it `piece` bytes at
// a time (as jemalloc's emitter hands over its buffer).
std::string Repaired(const std::string& text, size_t piece) {
  std::string out;
  ThreadNameRepair repair(&AppendTo, &out);
  for (size_t at = 0; at < text.size(); at += piece) repair.Feed(text.substr(at, piece));
  repair.Finish();
  return out;
}

// Two records as jemalloc 5.3 writes them, with the given thread names.
std::string Records(const std::string& alloc_name, const std::string& dalloc_name) {
  return R"({"sample_interval":4096,"recent_alloc_max":8,"recent_alloc":[)"
         R"({"size":100,"usize":112,"released":true,"alloc_thread_uid":3,"alloc_thread_name":")" +
         alloc_name +
         R"(","alloc_time":12,"alloc_trace":["0x401040"],"dalloc_thread_uid":4,)"
         R"("dalloc_thread_name":")" +
         dalloc_name +
         R"(","dalloc_time":13,"dalloc_trace":["0x401020"]},)"
         R"({"size":8,"usize":8,"released":false,"alloc_thread_uid":5,)"
         R"("alloc_time":14,"alloc_trace":[]}]})";
}

TEST(ThreadNameRepairTest, PlainNamesPassThroughByteForByte) {
  const std::string text = Records("worker-1", "io thread");
  for (size_t piece : {1, 2, 7, 23, 4096}) EXPECT_EQ(Repaired(text, piece), text) << piece;
}

// A name with quotes, backslashes, a control byte and even the text of a
// record's separator becomes a JSON string that reads back as the name.
TEST(ThreadNameRepairTest, NamesThatBreakTheJsonAreEscapedWhateverThePieces) {
  const std::string alloc = R"(say "hi" \o/)";
  const std::string dalloc = "tab\there\",\"x";
  const std::string text = Records(alloc, dalloc);
  ASSERT_TRUE(nlohmann::json::parse(text, nullptr, false).is_discarded()) << "the input is broken";
  for (size_t piece : {1, 3, 22, 4096}) {
    const std::string out = Repaired(text, piece);
    const nlohmann::json json = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << "piece " << piece << ": " << out;
    EXPECT_EQ(json["recent_alloc"][0]["alloc_thread_name"], alloc);
    EXPECT_EQ(json["recent_alloc"][0]["dalloc_thread_name"], dalloc);
    EXPECT_EQ(json["recent_alloc"][1]["alloc_time"], 14);
  }
}

TEST(ThreadNameRepairTest, ANameThatNeverEndsIsPassedOnAsItCame) {
  const std::string text = R"([{"alloc_thread_name":"cut sho)";
  EXPECT_EQ(Repaired(text, 5), text);
}

TEST(ThreadNameRepairTest, EscapesOnlyWhatJsonForbids) {
  EXPECT_EQ(EscapeJsonString("a\"b\\c\x01 d/é"), "a\\\"b\\\\c\\u0001 d/é");
}

}  // namespace
}  // namespace memprof::agent
