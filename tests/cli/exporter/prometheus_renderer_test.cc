#include "cli/exporter/prometheus_renderer.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "common/text_file.h"
#include "tests/support/occurrences.h"

namespace memprof::cli {
namespace {

TargetMetrics Jemalloc(pid_t pid, const std::string& command) {
  TargetMetrics t;
  t.pid = pid;
  t.command = command;
  t.up = true;
  t.allocator = "jemalloc";
  t.profiling_active = true;
  t.figures = {1000, 2000, 3000, 4000, 5000, 600, 70000};
  return t;
}

TEST(PrometheusRendererTest, OneJemallocTarget) {
  const std::string text = RenderPrometheus({Jemalloc(42, "demo")});
  const std::string labels = R"({pid="42",command="demo",allocator="jemalloc"})";
  EXPECT_NE(text.find("# HELP memprof_up 1 if the memprof agent"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE memprof_up gauge\nmemprof_up{pid=\"42\",command=\"demo\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("memprof_profiling_active" + labels + " 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("memprof_process_resident_bytes" + labels + " 70000\n"), std::string::npos);
  EXPECT_NE(text.find("memprof_jemalloc_allocated_bytes" + labels + " 1000\n"), std::string::npos);
  EXPECT_NE(text.find("memprof_jemalloc_active_bytes" + labels + " 2000\n"), std::string::npos);
  EXPECT_NE(text.find("memprof_jemalloc_resident_bytes" + labels + " 3000\n"), std::string::npos);
  EXPECT_NE(text.find("memprof_jemalloc_mapped_bytes" + labels + " 4000\n"), std::string::npos);
  EXPECT_NE(text.find("memprof_jemalloc_retained_bytes" + labels + " 5000\n"), std::string::npos);
  EXPECT_NE(text.find("memprof_jemalloc_metadata_bytes" + labels + " 600\n"), std::string::npos);
  EXPECT_EQ(test_support::CountOccurrences(text, "# HELP "), 9u) << text;
  EXPECT_EQ(test_support::CountOccurrences(text, "# TYPE "), 9u) << text;
  EXPECT_EQ(test_support::CountOccurrences(text, " gauge\n"), 9u) << text;
  EXPECT_TRUE(text.ends_with("\n"));
}

TEST(PrometheusRendererTest, EachFamilyOnceWithAllTargetsGrouped) {
  TargetMetrics down;
  down.pid = 7;
  down.command = "stuck";
  const std::string text = RenderPrometheus({Jemalloc(42, "a"), down, Jemalloc(43, "b")});
  EXPECT_EQ(test_support::CountOccurrences(text, "# TYPE memprof_up gauge"), 1u) << text;
  const size_t family = text.find("# TYPE memprof_up gauge\n");
  EXPECT_NE(text.find("memprof_up{pid=\"42\",command=\"a\"} 1\n"
                      "memprof_up{pid=\"7\",command=\"stuck\"} 0\n"
                      "memprof_up{pid=\"43\",command=\"b\"} 1\n",
                      family),
            std::string::npos)
      << text;
  EXPECT_EQ(test_support::CountOccurrences(text, "pid=\"7\""), 1u)
      << "a target that is down has only memprof_up\n"
      << text;
  EXPECT_EQ(test_support::CountOccurrences(text, "memprof_jemalloc_allocated_bytes{"), 2u) << text;
}

TEST(PrometheusRendererTest, GlibcTargetHasNoJemallocFamilies) {
  TargetMetrics glibc = Jemalloc(9, "c-prog");
  glibc.allocator = "glibc";
  glibc.profiling_active = false;
  const std::string text = RenderPrometheus({glibc});
  EXPECT_EQ(text.find("memprof_jemalloc_"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(memprof_process_resident_bytes{pid="9",command="c-prog",allocator="glibc"} 70000)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(memprof_profiling_active{pid="9",command="c-prog",allocator="glibc"} 0)"),
            std::string::npos)
      << text;
}

TEST(PrometheusRendererTest, PeakCapturesAreAGaugeAndACounter) {
  TargetMetrics capturing = Jemalloc(42, "demo");
  capturing.captures_held = 3;
  capturing.captures_taken_total = 7;
  const std::string text = RenderPrometheus({capturing, Jemalloc(43, "old-agent")});
  EXPECT_NE(text.find("# TYPE memprof_captures_held gauge\n"
                      "memprof_captures_held{pid=\"42\",command=\"demo\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE memprof_captures_taken_total counter\n"
                      "memprof_captures_taken_total{pid=\"42\",command=\"demo\"} 7\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("pid=\"43\",command=\"old-agent\"} 0"), std::string::npos)
      << "an agent before peak capture has no capture samples\n" << text;
}

TEST(PrometheusRendererTest, NoTargetsIsAnEmptyExposition) {
  EXPECT_EQ(RenderPrometheus({}), "");
}

TEST(PrometheusRendererTest, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue(R"(a"b)"), R"(a\"b)");
  EXPECT_EQ(EscapeLabelValue(R"(C:\tmp)"), R"(C:\\tmp)");
  EXPECT_EQ(EscapeLabelValue("two\nlines"), R"(two\nlines)");
  EXPECT_EQ(EscapeLabelValue("tab\there"), "tab\there") << "only \\, \" and LF are escaped";
  const std::string text = RenderPrometheus({Jemalloc(5, "we\"ird\\na\nme")});
  EXPECT_NE(text.find(R"(memprof_up{pid="5",command="we\"ird\\na\nme"} 1)"), std::string::npos)
      << text;
}

TEST(PrometheusRendererTest, HelpTextEscapesBackslashAndNewlineOnly) {
  EXPECT_EQ(EscapeHelpText("a \"quoted\" \\ word\nnext"), "a \"quoted\" \\\\ word\\nnext");
}

TEST(PrometheusRendererTest, InvalidUtf8BecomesTheReplacementCharacter) {
  EXPECT_EQ(ValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");                  // é stays
  EXPECT_EQ(ValidUtf8("\xF0\x9F\x90\xB3"), "\xF0\x9F\x90\xB3");        // 4-byte emoji stays
  EXPECT_EQ(ValidUtf8("a\xFFz"), "a\xEF\xBF\xBDz");                    // invalid byte
  EXPECT_EQ(ValidUtf8("\xC3"), "\xEF\xBF\xBD");                        // truncated
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");        // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(EscapeLabelValue("x\x80\""), "x\xEF\xBF\xBD\\\"");
}

// "memprof_jemalloc_{allocated,active}_bytes" -> both names.
std::vector<std::string> ExpandBraces(const std::string& pattern) {
  const size_t open = pattern.find('{');
  const size_t close = pattern.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {pattern};
  std::vector<std::string> names;
  std::stringstream choices(pattern.substr(open + 1, close - open - 1));
  for (std::string choice; std::getline(choices, choice, ',');) {
    names.push_back(pattern.substr(0, open) + choice + pattern.substr(close + 1));
  }
  return names;
}

// The user guide's table of the metrics (`stats --format prometheus` and the
// exporter) gives each family of the exposition with its real type.
TEST(PrometheusRendererTest, TheUserGuideGivesEveryMetricItsType) {
  TargetMetrics everything = Jemalloc(42, "demo");
  everything.captures_held = 1;
  everything.captures_taken_total = 3;
  std::map<std::string, std::string> types;
  std::istringstream exposition(RenderPrometheus({everything}));
  static const std::regex kType("# TYPE (\\S+) (\\S+)");
  std::smatch m;
  for (std::string line; std::getline(exposition, line);) {
    if (std::regex_match(line, m, kType)) types[m[1].str()] = m[2].str();
  }
  ASSERT_EQ(types.size(), 11u);
  auto guide = ReadTextFile(std::string(MEMPROF_TEST_DOCS_DIR) + "/user-guide.md");
  ASSERT_TRUE(guide) << guide.error().message;
  std::map<std::string, std::string> documented;
  static const std::regex kRow("^\\| `(memprof_[^`]+)` \\| (gauge|counter|histogram|summary) \\|");
  std::istringstream lines(*guide);
  for (std::string line; std::getline(lines, line);) {
    if (!std::regex_search(line, m, kRow)) continue;
    for (const std::string& name : ExpandBraces(m[1].str())) documented[name] = m[2].str();
  }
  EXPECT_EQ(documented, types) << "docs/user-guide.md, the table under `stats --format prometheus`";
}

}  // namespace
}  // namespace memprof::cli
