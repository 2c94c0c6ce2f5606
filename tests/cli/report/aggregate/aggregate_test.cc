#include "cli/report/aggregate/aggregate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "cli/report/aggregate/base_profile.h"
#include "cli/report/aggregate/jeprof_names.h"
#include "tests/cli/report/aggregate/fake_symbolizer.h"

namespace memprof::report::aggregate {
namespace {

using testing::FakeSymbolizer;
using testing::SharedProfile;

struct Row {
  double flat;
  double cum;
  bool operator==(const Row&) const = default;
};

std::map<std::string, Row> Rows(const Aggregation& aggregation) {
  std::map<std::string, Row> rows;
  for (const FunctionRow& row : aggregation.functions) rows[row.name] = {row.flat, row.cum};
  return rows;
}

Aggregation Aggregate(const HeapProfile& profile, AggregateOptions options = {}) {
  FakeSymbolizer symbolizer;
  auto aggregation = AggregateProfile(profile, symbolizer, options);
  EXPECT_TRUE(aggregation.has_value()) << aggregation.error().message;
  return aggregation.value_or(Aggregation{});
}

TEST(AggregateTest, FlatAndCumPerFunctionLikeJeprof) {
  Aggregation aggregation = Aggregate(SharedProfile());
  EXPECT_EQ(aggregation.total, 1900);        // every stack, S5 included
  EXPECT_EQ(aggregation.shown_total, 1850);  // S5 has no frame left
  std::map<std::string, Row> want = {
      {"Leaf", {1250, 1250}},            // S1 and S3's leaf, after the cut at malloc
      {"Helper (inline)", {500, 1500}},  // S2's leaf once operator new is cut
      {"Caller", {0, 1500}},
      {"main", {0, 1750}},
      {"Recursive", {0, 250}},  // twice in S3, counted once
      {"0x8ff", {100, 100}},    // unknown: named by its lookup address
  };
  EXPECT_EQ(Rows(aggregation), want);
  ASSERT_EQ(aggregation.functions.size(), 6u);
  // flat descending, then names in byte order
  EXPECT_EQ(aggregation.functions[0].name, "Leaf");
  EXPECT_EQ(aggregation.functions[2].name, "0x8ff");
  EXPECT_EQ(aggregation.functions[3].name, "Caller");
  EXPECT_EQ(aggregation.functions[5].name, "main");
}

TEST(AggregateTest, ObjectMetric) {
  AggregateOptions options;
  options.metric = Metric::kInuseObjects;
  Aggregation aggregation = Aggregate(SharedProfile(), options);
  EXPECT_EQ(aggregation.total, 19);
  EXPECT_EQ(Rows(aggregation)["Leaf"], (Row{12, 12}));
}

TEST(AggregateTest, AllocMetric) {
  AggregateOptions options;
  options.metric = Metric::kAllocSpace;
  Aggregation aggregation = Aggregate(SharedProfile(), options);
  EXPECT_EQ(aggregation.total, 3800);
  EXPECT_EQ(Rows(aggregation)["main"], (Row{0, 3500}));
}

TEST(AggregateTest, SymbolizesEachAddressOnce) {
  FakeSymbolizer symbolizer;
  auto aggregation = AggregateProfile(SharedProfile(), symbolizer, {});
  ASSERT_TRUE(aggregation.has_value());
  // Distinct lookup addresses: 0x110 0x20f 0x30f 0x40f 0x50f 0x60f 0x310 0x70f 0x71f 0x8ff
  EXPECT_EQ(symbolizer.calls, 10);
  EXPECT_EQ(aggregation->locations.size(), 10u);
}

// Stack by stack, as the report does while a dump is read: the same
// interning as the whole profile's at once, each address returned by the
// Add that met it first.
TEST(AggregateTest, AStackInternerInternsAsInternLookupAddresses) {
  const HeapProfile profile = SharedProfile();
  const InternedAddresses whole = InternLookupAddresses(profile);
  StackInterner interner;
  std::vector<uint64_t> first_met;
  for (const Sample& sample : profile.samples) {
    const std::span<const uint64_t> added = interner.Add(sample.stack);
    first_met.insert(first_met.end(), added.begin(), added.end());
  }
  const InternedAddresses one_by_one = interner.Release();
  EXPECT_EQ(one_by_one.addresses, whole.addresses);
  EXPECT_EQ(one_by_one.ids, whole.ids);
  EXPECT_EQ(one_by_one.starts, whole.starts);
  EXPECT_EQ(first_met, whole.addresses);
}

// Records merged by Unsample dropped from the records' interning: the
// interning of the samples that are left.
TEST(AggregateTest, DroppingRecordsLeavesTheInterningOfTheRest) {
  HeapProfile records = SharedProfile();
  ASSERT_GE(records.samples.size(), 3u);
  records.samples.insert(records.samples.begin() + 1, records.samples[0]);
  records.samples.push_back(records.samples[2]);
  InternedAddresses interned = InternLookupAddresses(records);
  const size_t last = records.samples.size() - 1;
  DropRecords(interned, std::vector<size_t>{1, last});
  const InternedAddresses expected = InternLookupAddresses(SharedProfile());
  EXPECT_EQ(interned.addresses, expected.addresses);
  EXPECT_EQ(interned.ids, expected.ids);
  EXPECT_EQ(interned.starts, expected.starts);
}

// The frames as indexes into the distinct lookup addresses (a return
// address is looked up one byte earlier, the leaf as it is), and an
// aggregation through them the same as one through the addresses.
TEST(AggregateTest, InternedAddressesGiveTheSameAggregation) {
  const HeapProfile profile = SharedProfile();
  const InternedAddresses interned = InternLookupAddresses(profile);
  size_t frame = 0;
  for (const Sample& sample : profile.samples) {
    for (size_t i = 0; i < sample.stack.size(); ++i, ++frame) {
      ASSERT_LT(frame, interned.ids.size());
      EXPECT_EQ(interned.addresses[interned.ids[frame]], LookupAddress(sample.stack, i));
    }
  }
  EXPECT_EQ(frame, interned.ids.size());
  std::vector<uint64_t> sorted = interned.addresses;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());  // distinct

  AggregateOptions options;
  options.interned = &interned;
  const Aggregation by_id = Aggregate(profile, options);
  const Aggregation by_address = Aggregate(profile);
  EXPECT_EQ(Rows(by_id), Rows(by_address));
  ASSERT_EQ(by_id.locations.size(), by_address.locations.size());
  for (size_t i = 0; i < by_id.locations.size(); ++i) {
    EXPECT_EQ(by_id.locations[i].address, by_address.locations[i].address);
  }
  ASSERT_EQ(by_id.stacks.size(), by_address.stacks.size());
  for (size_t i = 0; i < by_id.stacks.size(); ++i) {
    EXPECT_EQ(by_id.stacks[i].locations, by_address.stacks[i].locations);
    EXPECT_EQ(by_id.stacks[i].value, by_address.stacks[i].value);
  }
}

// The function table made apart from the stacks (svg and collapsed make it
// on another thread) is the one AggregateProfile makes, row for row, in
// every metric, with --lines and the filters, and of a --base diff.
TEST(AggregateTest, FunctionRowsOfTheStacksAreAggregateProfilesTable) {
  auto expect_same_table = [](const HeapProfile& profile, const AggregateOptions& options) {
    FakeSymbolizer symbolizer;
    auto whole = AggregateProfile(profile, symbolizer, options);
    auto stacks = AggregateStacks(profile, symbolizer, options);
    ASSERT_TRUE(whole.has_value() && stacks.has_value());
    EXPECT_TRUE(stacks->functions.empty());
    EXPECT_EQ(stacks->shown_total, 0);
    const FunctionTable table = FunctionRows(*stacks);
    EXPECT_EQ(table.shown_total, whole->shown_total);
    ASSERT_EQ(table.functions.size(), whole->functions.size());
    ASSERT_FALSE(table.functions.empty());
    for (size_t i = 0; i < table.functions.size(); ++i) {
      const FunctionRow& a = table.functions[i];
      const FunctionRow& b = whole->functions[i];
      EXPECT_EQ(a.name, b.name) << "row " << i;
      EXPECT_EQ(a.flat, b.flat) << a.name;
      EXPECT_EQ(a.cum, b.cum) << a.name;
      EXPECT_EQ(a.flat_base, b.flat_base) << a.name;
      EXPECT_EQ(a.cum_base, b.cum_base) << a.name;
    }
  };
  for (Metric metric : {Metric::kInuseSpace, Metric::kInuseObjects, Metric::kAllocSpace}) {
    AggregateOptions options;
    options.metric = metric;
    expect_same_table(SharedProfile(), options);
    options.lines = true;
    expect_same_table(SharedProfile(), options);
  }
  AggregateOptions filtered;
  filtered.focus = "main";
  filtered.ignore = "Recursive";
  expect_same_table(SharedProfile(), filtered);
  expect_same_table(testing::SharedDiffProfile(), {});
}

// Whether a row would show, told without the table where it can be: the
// same answer as the table's for profiles with rows, with none, with only
// frames the table ignores, and for a diff.
TEST(AggregateTest, AnyRowShownIsWhatTheTableSays) {
  auto table_says = [](const Aggregation& aggregation) {
    const std::vector<FunctionRow> rows = FunctionRows(aggregation).functions;
    return std::any_of(rows.begin(), rows.end(),
                       [](const FunctionRow& row) { return row.shown(); });
  };
  FakeSymbolizer symbolizer;
  std::vector<Aggregation> cases;
  cases.push_back(*AggregateStacks(SharedProfile(), symbolizer, {}));
  cases.push_back(*AggregateStacks(testing::SharedDiffProfile(), symbolizer, {}));
  cases.push_back(*AggregateStacks(SubtractBase(SharedProfile(), SharedProfile()), symbolizer, {}));
  cases.push_back(Aggregation{});
  Aggregation ignored = cases.front();
  for (Location& location : ignored.locations) location.address = 0xffffffffffff0000ULL;
  cases.push_back(ignored);
  EXPECT_TRUE(table_says(cases[0]));
  EXPECT_FALSE(table_says(cases[4]));
  for (const Aggregation& aggregation : cases) {
    EXPECT_EQ(AnyRowShown(aggregation), table_says(aggregation));
  }
}

TEST(AggregateTest, CutStacksKeepLeafFirstLocations) {
  Aggregation aggregation = Aggregate(SharedProfile());
  ASSERT_EQ(aggregation.stacks.size(), 5u);
  const StackSample& s1 = aggregation.stacks[0];
  ASSERT_EQ(s1.locations.size(), 3u);
  EXPECT_EQ(aggregation.locations[s1.locations[0]].address, 0x30fu);
  EXPECT_EQ(aggregation.locations[s1.locations[1]].names,
            (std::vector<std::string>{"Helper (inline)", "Caller"}));
  EXPECT_TRUE(aggregation.stacks[4].locations.empty());  // S5
}

TEST(AggregateTest, FocusKeepsStacksWithAMatchingFrame) {
  AggregateOptions options;
  options.focus = "Recursive";
  Aggregation aggregation = Aggregate(SharedProfile(), options);
  EXPECT_EQ(aggregation.total, 1900);  // jeprof's Total line ignores filters
  EXPECT_EQ(aggregation.shown_total, 250);
  EXPECT_EQ(Rows(aggregation)["main"], (Row{0, 250}));
}

TEST(AggregateTest, FocusMatchesFileAndLineAndAddresses) {
  AggregateOptions options;
  options.focus = "leaf\\.cc:12";
  EXPECT_EQ(Aggregate(SharedProfile(), options).shown_total, 1250);
  options.focus = "^0x8ff$";
  EXPECT_EQ(Aggregate(SharedProfile(), options).shown_total, 100);
  options.focus = "^00000000000008ff$";  // jeprof's spelling of the address
  EXPECT_EQ(Aggregate(SharedProfile(), options).shown_total, 100);
}

TEST(AggregateTest, FocusNeverMatchesTheCutAllocatorFrames) {
  AggregateOptions options;
  options.focus = "malloc|prof_backtrace";
  Aggregation aggregation = Aggregate(SharedProfile(), options);
  EXPECT_EQ(aggregation.shown_total, 0);
  EXPECT_TRUE(aggregation.functions.empty());
}

TEST(AggregateTest, IgnoreDropsStacksWithAMatchingFrame) {
  AggregateOptions options;
  options.ignore = "Helper";
  Aggregation aggregation = Aggregate(SharedProfile(), options);
  EXPECT_EQ(aggregation.shown_total, 350);
  EXPECT_EQ(Rows(aggregation)["Leaf"], (Row{250, 250}));
  EXPECT_FALSE(Rows(aggregation).contains("Caller"));
}

TEST(AggregateTest, FocusThenIgnore) {
  AggregateOptions options;
  options.focus = "main";
  options.ignore = "Recursive|Helper";
  EXPECT_EQ(Aggregate(SharedProfile(), options).shown_total, 0);
}

TEST(AggregateTest, BadRegexIsAnInvalidArgument) {
  FakeSymbolizer symbolizer;
  AggregateOptions options;
  options.ignore = "(unclosed";
  auto aggregation = AggregateProfile(SharedProfile(), symbolizer, options);
  ASSERT_FALSE(aggregation.has_value());
  EXPECT_EQ(aggregation.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(aggregation.error().message.rfind("bad --ignore regex '(unclosed': ", 0), 0u)
      << aggregation.error().message;
}

TEST(AggregateTest, FramesAboveTheUserHalfGetNoRow) {
  HeapProfile profile;
  profile.samples.push_back({{0xffffffffff600010, 0x510}, {1, 64}, {}});
  Aggregation aggregation = Aggregate(profile);
  // jeprof's TranslateStack skips the vsyscall frame: main gets the flat.
  EXPECT_EQ(Rows(aggregation), (std::map<std::string, Row>{{"main", {64, 64}}}));
}

TEST(AggregateTest, IdenticalStacksAfterTheCutMerge) {
  HeapProfile profile;
  profile.samples.push_back({{0x110, 0x210, 0x510}, {1, 10}, {}});
  profile.samples.push_back({{0x120, 0x220, 0x510}, {1, 20}, {}});
  Aggregation aggregation = Aggregate(profile);
  ASSERT_EQ(aggregation.stacks.size(), 1u);
  EXPECT_EQ(aggregation.stacks[0].value, 30);
}

TEST(AggregateTest, ZeroValueStacksAreLeftOut) {
  HeapProfile profile;
  profile.samples.push_back({{0x310}, {0, 0}, {1, 64}});
  Aggregation aggregation = Aggregate(profile);
  EXPECT_TRUE(aggregation.stacks.empty());
  EXPECT_TRUE(aggregation.functions.empty());
}

TEST(AggregateTest, SortByCum) {
  std::vector<FunctionRow> rows = Aggregate(SharedProfile()).functions;
  SortFunctionRows(rows, true);
  EXPECT_EQ(rows[0].name, "main");
  EXPECT_EQ(rows[1].name, "Caller");  // ties with Helper (inline): by name
  EXPECT_EQ(rows[2].name, "Helper (inline)");
}

TEST(BaseProfileTest, SubtractsStackByStack) {
  HeapProfile profile;
  profile.samples = {{{0x310, 0x510}, {10, 1000}, {}}, {{0x710}, {1, 100}, {}}};
  HeapProfile base;
  base.samples = {{{0x310, 0x510}, {4, 1500}, {}}, {{0x910}, {2, 200}, {}}};
  HeapProfile diff = SubtractBase(profile, base);
  ASSERT_EQ(diff.samples.size(), 3u);
  EXPECT_EQ(diff.samples[0].inuse.objects, 6);
  EXPECT_EQ(diff.samples[0].inuse.bytes, -500);
  EXPECT_EQ(diff.samples[1].inuse.bytes, 100);                       // not in base
  EXPECT_EQ(diff.samples[2].stack, (std::vector<uint64_t>{0x910}));  // only in base
  EXPECT_EQ(diff.samples[2].inuse.bytes, -200);
  Aggregation aggregation = Aggregate(diff);
  EXPECT_EQ(aggregation.total, -600);
}

TEST(BaseProfileTest, DropNegative) {
  HeapProfile profile;
  profile.samples = {{{0x310}, {10, 1000}, {}}};
  HeapProfile base;
  base.samples = {{{0x310}, {4, 1500}, {}}, {{0x910}, {2, 200}, {}}};
  HeapProfile diff = SubtractBase(profile, base, true);
  ASSERT_EQ(diff.samples.size(), 1u);
  EXPECT_EQ(diff.samples[0].inuse.objects, 6);
  EXPECT_EQ(diff.samples[0].inuse.bytes, 0);
}

TEST(JeprofNamesTest, ShortFunctionNameLikeJeprof) {
  // Expected strings are jeprof's ShortFunctionName run in Perl.
  const std::pair<const char*, const char*> cases[] = {
      {"std::vector<int, std::allocator<int> >::reserve(unsigned long)", "std::vector::reserve"},
      {"void* newImpl<false>(unsigned long)", "void* newImpl"},
      {"operator new(unsigned long)", "operator new"},
      {"operator new[](unsigned long, std::nothrow_t const&)", "operator new[]"},
      {"Foo::Bar(int) const", "Foo::Bar"},
      {"std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
       "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char "
       "const*)",
       "std::operator<< "},
      {"int ns::f(std::function<void (int)>)", "ns::f"},
      {"unsigned long long ns::Widget::Size() const", "ns::Widget::Size"},
      {"Foo::my_operator()(int)", "Foo::my_operator"},
  };
  for (const auto& [full, want] : cases) EXPECT_EQ(ShortFunctionName(full), want) << full;
}

// Where we differ from jeprof on purpose, as pprof does: these parentheses
// are part of the name, not an argument list. (jeprof says "::Descend",
// "demo::::ServeRequests", "a::b::operator" and "void ::Run"; an anonymous
// namespace inside an argument list goes with the list.)
TEST(JeprofNamesTest, ShortFunctionNameKeepsAnonymousNamespacesAndCallOperators) {
  const std::pair<const char*, const char*> cases[] = {
      {"(anonymous namespace)::Descend(unsigned long, int)", "(anonymous namespace)::Descend"},
      {"demo::(anonymous namespace)::ServeRequests()",
       "demo::(anonymous namespace)::ServeRequests"},
      {"a::b<c>::operator()(int) const", "a::b::operator()"},
      {"ns::f(std::function<void ((anonymous namespace)::X)>)", "ns::f"},
      {"void (anonymous namespace)::Run<int>(int)", "(anonymous namespace)::Run"},
      {"void demo::(anonymous namespace)::Run<int>(int)", "demo::(anonymous namespace)::Run"},
  };
  for (const auto& [full, want] : cases) EXPECT_EQ(ShortFunctionName(full), want) << full;
}

TEST(JeprofNamesTest, AllocatorEntryPoints) {
  EXPECT_TRUE(IsAllocatorEntryPoint("malloc"));
  EXPECT_TRUE(IsAllocatorEntryPoint("_malloc"));
  EXPECT_TRUE(IsAllocatorEntryPoint("operator new[]"));
  EXPECT_TRUE(IsAllocatorEntryPoint("void* newImpl"));
  EXPECT_TRUE(IsAllocatorEntryPoint("tcmalloc::Allocate"));
  EXPECT_TRUE(IsAllocatorEntryPoint("SomeTCMallocThing"));
  EXPECT_FALSE(IsAllocatorEntryPoint("malloc_usable_size"));
  EXPECT_FALSE(IsAllocatorEntryPoint("prof_backtrace"));  // cut with what precedes malloc
  EXPECT_FALSE(IsAllocatorEntryPoint("my::tcmalloc::x"));
}

}  // namespace
}  // namespace memprof::report::aggregate
