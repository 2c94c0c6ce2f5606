// libFuzzer entry point for the allocation profile parser and what a parsed
// profile flows into (per-record unsampling, aggregation, the text and json
// reports with the allocation header, --lifetimes): whatever the bytes, the
// result must be an Error naming the input and a line, or a rendered report,
// never a crash, a hang or unbounded memory. See CMakeLists.txt for how to
// run it.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/allocation_samples.h"
#include "cli/report/aggregate/lifetimes.h"
#include "cli/report/aggregate/symbolization.h"
#include "cli/report/parse/allocation_profile_parser.h"
#include "cli/report/render/json_report.h"
#include "cli/report/render/lifetimes_report.h"
#include "cli/report/render/text_report.h"
#include "tests/fuzz/null_buffer.h"

namespace {

using namespace memprof::report;             // NOLINT: a fuzz entry point, not a header
using namespace memprof::report::parse;      // NOLINT
using namespace memprof::report::aggregate;  // NOLINT
using namespace memprof::report::render;     // NOLINT

using memprof::fuzz::NullBuffer;

// Limits small enough that a fuzz input cannot make one run slow.
AllocationParseLimits FuzzLimits() {
  AllocationParseLimits limits;
  limits.max_header_line_bytes = 4096;
  limits.max_records = 4096;
  limits.max_frames = 128;
  limits.max_mapped_lines = 4096;
  return limits;
}

void RenderReports(const AllocationSamples& samples, Metric metric, std::ostream& out) {
  HexSymbolizer symbolizer;
  AggregateOptions options;
  options.metric = metric;
  auto aggregation = AggregateProfile(samples.profile, symbolizer, options);
  if (!aggregation) return;
  ReportOptions report;
  report.top = 10;
  report.allocation = &samples.summary;
  (void)TextReportRenderer(report).Render(*aggregation, out);
  (void)JsonReportRenderer(report).Render(*aggregation, out);
}

void RenderLifetimes(const AllocationProfile& input, const AllocationSamples& samples,
                     std::ostream& out) {
  HexSymbolizer symbolizer;
  const InternedAddresses interned = InternLookupAddresses(samples.profile);
  const auto names = FlatFunctionNames(samples.profile, symbolizer, interned, false);
  const auto sites = ComputeLifetimes(input, samples, names);
  (void)WriteLifetimesText(samples.summary, sites, 10, out);
  (void)WriteLifetimesJson(samples.summary, sites, 10, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = ParseAllocationProfileText(text, "fuzz.prof", FuzzLimits());
  if (!profile) {
    if (profile.error().message.rfind("fuzz.prof:", 0) != 0) __builtin_trap();
    return 0;
  }
  AllocationSamples samples = ToHeapProfile(*profile);
  NullBuffer buffer;
  std::ostream out(&buffer);
  RenderReports(samples, Metric::kAllocSpace, out);
  RenderReports(samples, Metric::kInuseObjects, out);
  RenderLifetimes(*profile, samples, out);
  return 0;
}
