// Delta computation (memory_figures) and how `stats --watch` prints it.
#include "cli/collect/stats_watch_renderer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "cli/client/memory_figures.h"

namespace memprof::cli {
namespace {

using std::chrono::milliseconds;

StatsSample Sample(int64_t at_ms, uint64_t allocated, uint64_t rss) {
  StatsSample s;
  s.taken = std::chrono::steady_clock::time_point(milliseconds(at_ms));
  s.unix_ms = 1795382130000 + at_ms;
  s.allocator = memprof::v1::ALLOCATOR_KIND_JEMALLOC;
  s.figures = {allocated, allocated + 1000, 3 << 20, 8 << 20, 1 << 20, 200000, rss};
  return s;
}

size_t Index(const char* key) {
  const auto& fields = FigureFields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (std::string(fields[i].key) == key) return i;
  }
  ADD_FAILURE() << key;
  return 0;
}

std::string LineStartingWith(const std::string& text, const std::string& prefix) {
  const size_t start = text.find("\n" + prefix);
  if (start == std::string::npos) return "";
  return text.substr(start + 1, text.find('\n', start + 1) - start - 1);
}

TEST(StatsDeltaTest, ChangesAreSignedAndRatesUseTheMeasuredInterval) {
  const StatsDelta d = ComputeDelta(Sample(0, 10000, 50000), Sample(2500, 15000, 40000));
  EXPECT_DOUBLE_EQ(d.interval_seconds, 2.5);
  EXPECT_EQ(d.change[Index("allocated")], 5000);
  EXPECT_EQ(d.change[Index("active")], 5000);
  EXPECT_EQ(d.change[Index("rss_bytes")], -10000);
  EXPECT_EQ(d.change[Index("mapped")], 0);
  EXPECT_DOUBLE_EQ(d.per_second[Index("allocated")], 2000.0);
  EXPECT_DOUBLE_EQ(d.per_second[Index("rss_bytes")], -4000.0);
}

TEST(StatsDeltaTest, HugeShrinkIsExactAndNoIntervalMeansNoRate) {
  StatsSample before = Sample(0, std::numeric_limits<uint64_t>::max() / 2, 0);
  StatsSample after = Sample(0, 1, 0);
  const StatsDelta d = ComputeDelta(before, after);
  EXPECT_EQ(d.change[Index("allocated")],
            1 - static_cast<int64_t>(std::numeric_limits<uint64_t>::max() / 2));
  EXPECT_EQ(d.interval_seconds, 0.0);
  EXPECT_EQ(d.per_second[Index("allocated")], 0.0) << "no division by a zero interval";
}

TEST(StatsDeltaTest, FigureFieldsMatchTheStatsJsonKeys) {
  std::vector<std::string> keys;
  for (const FigureField& f : FigureFields()) keys.push_back(f.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"allocated", "active", "resident", "mapped",
                                            "retained", "metadata", "rss_bytes"}));
}

TEST(StatsWatchRendererTest, SignedBytesAndRates) {
  EXPECT_EQ(FormatSignedBytes(0), "0 B");
  EXPECT_EQ(FormatSignedBytes(512), "+512 B");
  EXPECT_EQ(FormatSignedBytes(-1536), "-1.5 KiB");
  EXPECT_EQ(FormatSignedBytes(std::numeric_limits<int64_t>::min()), "-8.0 EiB");
  EXPECT_EQ(FormatByteRate(65536.4), "+64.0 KiB/s");
  EXPECT_EQ(FormatByteRate(-0.2), "0 B/s");
  EXPECT_EQ(FormatByteRate(1e300), "n/a");
}

TEST(StatsWatchRendererTest, JsonLineHasFixedTypesAndTheDeltas) {
  const Target target{42, "/tmp/s/42.sock", "demo"};
  const StatsSample s1 = Sample(0, 10000, 50000);
  const StatsSample s2 = Sample(2000, 14000, 50000);
  const auto first = WatchSampleToJson(target, 1, s1, StatsDelta{});
  const auto second = WatchSampleToJson(target, 2, s2, ComputeDelta(s1, s2));
  for (const auto* j : {&first, &second}) {
    EXPECT_EQ((*j)["pid"], 42);
    EXPECT_EQ((*j)["allocator"], "jemalloc");
    EXPECT_TRUE((*j)["interval_seconds"].is_number_float()) << j->dump();
    EXPECT_TRUE((*j)["fragmentation_ratio"].is_number_float()) << j->dump();
    for (const FigureField& f : FigureFields()) {
      EXPECT_TRUE((*j)[f.key].is_number_unsigned()) << f.key;
      EXPECT_TRUE((*j)["delta"][f.key].is_number_integer()) << f.key;
      EXPECT_TRUE((*j)["per_second"][f.key].is_number_float()) << f.key << " " << j->dump();
    }
  }
  EXPECT_EQ(first["sample"], 1);
  EXPECT_EQ(first["delta"]["allocated"], 0);
  EXPECT_EQ(second["sample"], 2);
  EXPECT_EQ(second["unix_ms"], s2.unix_ms);
  EXPECT_EQ(second["allocated"], 14000);
  EXPECT_EQ(second["delta"]["allocated"], 4000);
  EXPECT_DOUBLE_EQ(second["per_second"]["allocated"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(second["interval_seconds"].get<double>(), 2.0);
}

TEST(StatsWatchRendererTest, TableShowsValuesChangesAndRates) {
  const Target target{42, "/tmp/s/42.sock", "demo"};
  const StatsSample s1 = Sample(0, 10 << 20, 50 << 20);
  const StatsSample s2 = Sample(2000, 12 << 20, 49 << 20);
  const std::string first = RenderWatchTable(target, milliseconds(2000), 1, s1, StatsDelta{});
  const std::string table = RenderWatchTable(target, milliseconds(2000), 2, s2,
                                             ComputeDelta(s1, s2));
  EXPECT_NE(table.find("pid 42 (demo), jemalloc: sample 2 at "), std::string::npos) << table;
  EXPECT_NE(table.find("every 2s (Ctrl-C to stop)"), std::string::npos) << table;
  EXPECT_NE(table.find("NOW"), std::string::npos) << table;
  const std::string allocated = LineStartingWith(table, "allocated ");
  EXPECT_NE(allocated.find("12.0 MiB"), std::string::npos) << table;
  EXPECT_NE(allocated.find("+2.0 MiB"), std::string::npos) << table;
  EXPECT_NE(allocated.find("+1.0 MiB/s"), std::string::npos) << table;
  EXPECT_NE(table.find("RSS"), std::string::npos) << table;
  EXPECT_NE(table.find("-1.0 MiB"), std::string::npos) << "RSS shrank\n" << table;
  EXPECT_NE(table.find("-512.0 KiB/s"), std::string::npos) << table;
  EXPECT_NE(table.find("fragmentation"), std::string::npos) << table;
  EXPECT_EQ(first.find("+"), std::string::npos) << "no change on the first reading\n" << first;
  EXPECT_EQ(LineCount(table), 10u) << "title, header, 7 figures, fragmentation\n" << table;
  EXPECT_EQ(LineCount(first), LineCount(table)) << "frames of one size redraw cleanly";
  EXPECT_EQ(table.find(" \n"), std::string::npos) << "no trailing blanks\n" << table;
}

TEST(StatsWatchRendererTest, RedrawMovesUpOverThePreviousFrameAndClears) {
  EXPECT_EQ(RedrawPrefix(0), "");
  EXPECT_EQ(RedrawPrefix(10), "\x1b[10F\x1b[J");
}

}  // namespace
}  // namespace memprof::cli
