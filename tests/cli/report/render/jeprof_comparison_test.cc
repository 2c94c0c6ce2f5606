// Our parser + unsampling + aggregation against the real jeprof, on dumps
// made at test time by tests/testprogs/many_stacks_target and on the
// recorded fixture. jeprof is required: without it (or without what it runs
// itself, such as /usr/bin/file) these tests fail and name the package. jeprof runs without object
// tools (--tools=...:/bin/false) so it names frames by address exactly as HexSymbolizer does, which
// makes every row comparable, not just the totals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/base_profile.h"
#include "cli/report/aggregate/jeprof_names.h"
#include "cli/report/aggregate/unsample.h"
#include "cli/report/render/collapsed_report.h"
#include "cli/report/render/text_report.h"
#include "tests/cli/report/parse/test_util.h"
#include "tests/support/debian_tools.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace memprof::report::render {
namespace {

using test_support::Quote;
using test_support::RunShell;

const std::string kTarget = MEMPROF_MANY_STACKS_TARGET;
const std::string kNoTools =
    "--tools=nm:/bin/false,addr2line:/bin/false,objdump:/bin/false,c++filt:/bin/false";

// jeprof spells an unresolved frame 00007f12...; HexSymbolizer 0x7f12....
std::string NormalizeAddresses(const std::string& text) {
  static const std::regex kJeprofAddress("[0-9a-f]{16}");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), kJeprofAddress);
  size_t copied = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out += text.substr(copied, static_cast<size_t>(it->position()) - copied);
    std::string digits = it->str();
    size_t nonzero = digits.find_first_not_of('0');
    out += "0x" + (nonzero == std::string::npos ? "0" : digits.substr(nonzero));
    copied = static_cast<size_t>(it->position() + it->length());
  }
  return out + text.substr(copied);
}

// A --text table, split so that ties in flat (which jeprof breaks by its own
// spelling of the names) do not matter: the header, the ordered columns
// flat/flat%/sum% (order-independent within a tie), and per name the rest.
struct TextTable {
  std::string total_line;
  std::vector<std::string> ordered;
  std::map<std::string, std::string> by_name;
  bool operator==(const TextTable&) const = default;
};

// "Total: 12.3 MB" and ours "Total: 12.3 MiB" are the same figure: both
// divide by 2^20, jeprof only spells the unit loosely.
std::string TotalFigure(const std::string& total_line) {
  if (total_line.ends_with(" MB")) return total_line.substr(0, total_line.size() - 3) + " MiB";
  return total_line;
}

TextTable SplitTable(const std::string& text) {
  TextTable table;
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  table.total_line = TotalFigure(line);
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string flat, flat_pct, sum_pct, cum, cum_pct, name;
    fields >> flat >> flat_pct >> sum_pct >> cum >> cum_pct;
    if (flat == "flat") continue;  // our header row; jeprof has none
    std::getline(fields >> std::ws, name);
    table.ordered.push_back(flat + " " + flat_pct + " " + sum_pct);
    table.by_name[name] = flat + " " + flat_pct + " " + cum + " " + cum_pct;
  }
  return table;
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

HeapProfile Load(const std::string& path) {
  auto dump = parse::ParseHeapV2File(path);
  EXPECT_TRUE(dump.has_value()) << dump.error().message;
  return dump ? aggregate::Unsample(std::move(*dump)) : HeapProfile{};
}

struct Variant {
  const char* jeprof_flags;
  Metric metric;
  bool show_bytes;
};

const Variant kVariants[] = {{"", Metric::kInuseSpace, false},
                             {"--show_bytes", Metric::kInuseSpace, true},
                             {"--inuse_objects", Metric::kInuseObjects, false}};

std::string OurText(const HeapProfile& profile, const Variant& variant,
                    const aggregate::AggregateOptions& base_options = {}) {
  aggregate::HexSymbolizer symbolizer;
  aggregate::AggregateOptions options = base_options;
  options.metric = variant.metric;
  auto aggregation = aggregate::AggregateProfile(profile, symbolizer, options);
  EXPECT_TRUE(aggregation.has_value()) << aggregation.error().message;
  ReportOptions report;
  report.show_bytes = variant.show_bytes;
  std::ostringstream out;
  EXPECT_TRUE(TextReportRenderer(report).Render(*aggregation, out).has_value());
  return out.str();
}

class JeprofComparisonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test_support::CanRun(test_support::Jeprof(), &jeprof_));
  }

  // Runs many_stacks_target once with its own prof.dump; returns the dump.
  std::string MakeDump(const std::string& name, int lg_sample, const std::string& args) {
    std::string path = dir_.File(name);
    RunShell("MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:" + std::to_string(lg_sample) +
             " setarch x86_64 -R " + Quote(kTarget) + " " + args + " --once --self-dump " +
             Quote(path) + " 2>/dev/null");
    return path;
  }

  std::string Jeprof(const std::string& flags, const std::string& dump) {
    return RunShell("PERL_HASH_SEED=0 " + Quote(jeprof_) + " " + flags + " " + Quote(kTarget) +
                    " " + Quote(dump) + " 2>/dev/null");
  }

  // `same_order`: false for --base, where jeprof ranks rows by signed
  // change and we by its size; every figure of every row still matches.
  void ExpectSameText(const HeapProfile& profile, const std::string& dump,
                      const std::string& extra_flags = "",
                      const aggregate::AggregateOptions& options = {}, bool same_order = true) {
    for (const Variant& variant : kVariants) {
      std::string theirs = NormalizeAddresses(
          Jeprof("--text " + kNoTools + " " + variant.jeprof_flags + " " + extra_flags, dump));
      std::string ours = OurText(profile, variant, options);
      ASSERT_FALSE(theirs.empty());
      TextTable our_table = SplitTable(ours);
      TextTable their_table = SplitTable(theirs);
      if (!same_order) our_table.ordered = their_table.ordered = {};
      EXPECT_EQ(our_table, their_table)
          << "jeprof " << variant.jeprof_flags << " " << extra_flags << "\n--- ours:\n"
          << ours << "--- jeprof:\n"
          << theirs;
    }
  }

  std::string jeprof_;
  test_support::TempDir dir_{"memprof-analysis"};
};

TEST_F(JeprofComparisonTest, UnsampledDumpEveryRow) {
  std::string dump = MakeDump("identity.heap", 0, "--stacks 2000 --bytes 1000");
  ExpectSameText(Load(dump), dump);
}

TEST_F(JeprofComparisonTest, SampledDumpEveryRow) {
  std::string dump = MakeDump("sampled.heap", 12, "--stacks 500 --bytes 100 --allocs-per-stack 40");
  HeapProfile profile = Load(dump);
  ASSERT_EQ(profile.sample_period, 4096u);
  ExpectSameText(profile, dump);
}

TEST_F(JeprofComparisonTest, RecordedFixtureEveryRow) {
  std::string dump = parse::testing::DataPath("many_stacks_sampled.heap");
  ExpectSameText(Load(dump), dump);
}

TEST_F(JeprofComparisonTest, TotalLineOfSymbolizingJeprof) {
  // With real symbols jeprof's rows differ from HexSymbolizer's, but not its Total.
  std::string dump =
      MakeDump("symbolized.heap", 10, "--stacks 300 --bytes 200 --allocs-per-stack 8");
  HeapProfile profile = Load(dump);
  for (const Variant& variant : kVariants) {
    std::string theirs = Jeprof(std::string("--text ") + variant.jeprof_flags, dump);
    std::string ours = OurText(profile, variant);
    EXPECT_EQ(ours.substr(0, ours.find('\n')), TotalFigure(theirs.substr(0, theirs.find('\n'))));
  }
}

TEST_F(JeprofComparisonTest, FocusAndIgnore) {
  std::string dump = MakeDump("filters.heap", 0, "--stacks 256");
  HeapProfile profile = Load(dump);
  // A caller that half the stacks pass through (ManyStacksBranch1 at the top level)
  // and one frame deeper down, named as jeprof names them without symbols.
  const Sample& sample = profile.samples.at(profile.samples.size() / 2);
  std::string focus =
      aggregate::JeprofAddress(LookupAddress(sample.stack, sample.stack.size() - 4));
  std::string ignore = aggregate::JeprofAddress(LookupAddress(sample.stack, 6));
  aggregate::AggregateOptions options;
  options.focus = focus;
  ExpectSameText(profile, dump, "--focus=" + focus, options);
  options.ignore = ignore;
  ExpectSameText(profile, dump, "--focus=" + focus + " --ignore=" + ignore, options);
}

TEST_F(JeprofComparisonTest, Base) {
  // Same binary, no ASLR, same stacks, different counts: real per-stack differences.
  std::string dump = MakeDump("now.heap", 0, "--stacks 128 --allocs-per-stack 3");
  std::string base = MakeDump("base.heap", 0, "--stacks 128 --allocs-per-stack 1 --bytes 100");
  HeapProfile diff = aggregate::SubtractBase(Load(dump), Load(base));
  ExpectSameText(diff, dump, "--base=" + Quote(base), {}, false);
  HeapProfile dropped = aggregate::SubtractBase(Load(dump), Load(base), true);
  ExpectSameText(dropped, dump, "--drop_negative --base=" + Quote(base), {}, false);
}

TEST_F(JeprofComparisonTest, Collapsed) {
  std::string dump =
      MakeDump("collapsed.heap", 11, "--stacks 64 --bytes 300 --allocs-per-stack 20");
  aggregate::HexSymbolizer symbolizer;
  auto aggregation = aggregate::AggregateProfile(Load(dump), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  std::ostringstream ours;
  ASSERT_TRUE(CollapsedReportRenderer().Render(*aggregation, ours).has_value());
  std::string theirs = Jeprof("--collapsed " + kNoTools, dump);
  EXPECT_EQ(SortedLines(ours.str()), SortedLines(NormalizeAddresses(theirs)));
}

// --base in folded form: signed counts per stack, and the stacks that did
// not change as 0, exactly as jeprof prints them. Fewer stacks now than in
// the base, and more bytes each: growth, shrinkage and base-only stacks.
TEST_F(JeprofComparisonTest, CollapsedBase) {
  std::string dump = MakeDump("now.heap", 0, "--stacks 96 --bytes 256");
  std::string base = MakeDump("base.heap", 0, "--stacks 128 --bytes 64");
  aggregate::HexSymbolizer symbolizer;
  auto aggregation =
      aggregate::AggregateProfile(aggregate::SubtractBase(Load(dump), Load(base)), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  std::ostringstream ours;
  ASSERT_TRUE(CollapsedReportRenderer().Render(*aggregation, ours).has_value());
  std::string theirs = Jeprof("--collapsed " + kNoTools + " --base=" + Quote(base), dump);
  EXPECT_NE(theirs.find(" -"), std::string::npos) << "no negative stack to compare";
  EXPECT_NE(theirs.find(" 0\n"), std::string::npos) << "no unchanged stack to compare";
  EXPECT_EQ(SortedLines(ours.str()), SortedLines(NormalizeAddresses(theirs)));
}

// The same comparisons without running jeprof: its recorded output.
TEST(RecordedJeprofTest, TextTables) {
  HeapProfile profile = Load(parse::testing::DataPath("many_stacks_sampled.heap"));
  const std::pair<const char*, Variant> goldens[] = {
      {"many_stacks_sampled.jeprof.txt", kVariants[0]},
      {"many_stacks_sampled.jeprof.bytes.txt", kVariants[1]},
      {"many_stacks_sampled.jeprof.objects.txt", kVariants[2]}};
  for (const auto& [file, variant] : goldens) {
    std::string theirs =
        NormalizeAddresses(parse::testing::ReadFile(parse::testing::DataPath(file)));
    ASSERT_FALSE(theirs.empty()) << file;
    EXPECT_EQ(SplitTable(OurText(profile, variant)), SplitTable(theirs)) << file;
  }
}

TEST(RecordedJeprofTest, CollapsedStacks) {
  aggregate::HexSymbolizer symbolizer;
  auto aggregation = aggregate::AggregateProfile(
      Load(parse::testing::DataPath("many_stacks_sampled.heap")), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  std::ostringstream ours;
  ASSERT_TRUE(CollapsedReportRenderer().Render(*aggregation, ours).has_value());
  std::string theirs = parse::testing::ReadFile(
      parse::testing::DataPath("many_stacks_sampled.jeprof.collapsed.txt"));
  EXPECT_EQ(SortedLines(ours.str()), SortedLines(NormalizeAddresses(theirs)));
}

}  // namespace
}  // namespace memprof::report::render
