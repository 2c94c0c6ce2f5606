// libFuzzer entry point for merging several dumps and for --trend: the input
// is split into up to kMaxDumps heap_v2 dumps at lines "=== <seconds>" (the
// number is the dump's time, so times can tie, run backwards or be missing);
// those that parse are put into one address space, summed and rendered, and
// ranked by growth. Whatever the bytes: no crash, no hang, and the merged
// total is the sum of the dumps' totals. See CMakeLists.txt to run it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/symbolization.h"
#include "cli/report/aggregate/unsample.h"
#include "cli/report/merge/profile_merge.h"
#include "cli/report/parse/heap_dump_reader.h"
#include "cli/report/render/collapsed_report.h"
#include "cli/report/trend/trend.h"
#include "cli/report/trend/trend_report.h"
#include "tests/fuzz/null_buffer.h"

namespace {

using namespace memprof;  // NOLINT: a fuzz entry point, not a header

constexpr size_t kMaxDumps = 8;
constexpr std::string_view kSeparator = "=== ";

using fuzz::NullBuffer;

report::parse::ParseLimits FuzzLimits() {
  report::parse::ParseLimits limits;
  limits.max_line_bytes = 4096;
  limits.max_frames = 64;
  limits.max_records = 1024;
  limits.max_threads = 64;
  limits.max_mapped_lines = 256;
  return limits;
}

struct Piece {
  double seconds = 0;
  std::string_view text;
};

// Splits at lines starting with "=== "; the rest of such a line is the time
// of the dump that follows it (the first dump's time is 0).
std::vector<Piece> Split(std::string_view input) {
  std::vector<Piece> pieces;
  double seconds = 0;
  size_t piece_begin = 0;
  size_t line_begin = 0;
  while (line_begin < input.size() && pieces.size() + 1 < kMaxDumps) {
    size_t end = input.find('\n', line_begin);
    end = end == std::string_view::npos ? input.size() : end + 1;
    const std::string_view line = input.substr(line_begin, end - line_begin);
    if (line.starts_with(kSeparator)) {
      pieces.push_back({seconds, input.substr(piece_begin, line_begin - piece_begin)});
      seconds = std::strtod(std::string(line.substr(kSeparator.size())).c_str(), nullptr);
      piece_begin = end;
    }
    line_begin = end;
  }
  pieces.push_back({seconds, input.substr(piece_begin)});
  return pieces;
}

double Total(const report::HeapProfile& profile) {
  double total = 0;
  for (const report::Sample& sample : profile.samples) total += sample.inuse.bytes;
  return total;
}

void CheckSum(const std::vector<report::HeapProfile>& profiles, const report::HeapProfile& sum) {
  double expected = 0;
  for (const report::HeapProfile& profile : profiles) expected += Total(profile);
  const double got = Total(sum);
  if (!std::isfinite(expected) || !std::isfinite(got)) return;
  if (std::fabs(expected - got) > 1e-6 * std::max(1.0, std::fabs(expected))) __builtin_trap();
}

void Trend(const report::merge::SharedSpace& space, const std::vector<double>& times) {
  report::aggregate::HexSymbolizer symbolizer;
  std::vector<report::trend::Snapshot> snapshots;
  for (size_t i = 0; i < space.profiles.size(); ++i) {
    auto aggregation = report::aggregate::AggregateProfile(space.profiles[i], symbolizer, {});
    if (!aggregation) return;
    snapshots.push_back({times[i], std::move(aggregation->functions)});
  }
  auto rows = report::trend::ComputeTrend(snapshots);
  if (!rows) return;
  report::trend::TrendResult result;
  for (double time : times) result.dumps.push_back({"fuzz.heap", {time, {}}});
  result.rows = std::move(*rows);
  NullBuffer buffer;
  std::ostream out(&buffer);
  (void)report::trend::RenderTrendText(result, {}, out);
  (void)report::trend::RenderTrendJson(result, {}, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<report::HeapProfile> profiles;
  std::vector<double> times;
  for (const Piece& piece : Split(input)) {
    auto dump = report::parse::ParseHeapDumpText(piece.text, "fuzz.heap", FuzzLimits());
    if (!dump) continue;
    profiles.push_back(report::aggregate::Unsample(std::move(*dump)));
    times.push_back(piece.seconds);
  }
  if (profiles.empty()) return 0;
  report::merge::SharedSpace space = report::merge::IntoOneAddressSpace(profiles);
  Trend(space, times);
  report::HeapProfile sum = report::merge::SumProfiles(space.profiles, space.mapped_libraries);
  CheckSum(profiles, sum);
  report::aggregate::HexSymbolizer symbolizer;
  auto aggregation = report::aggregate::AggregateProfile(sum, symbolizer, {});
  if (!aggregation) return 0;
  NullBuffer buffer;
  std::ostream out(&buffer);
  (void)report::render::CollapsedReportRenderer().Render(*aggregation, out);
  return 0;
}
