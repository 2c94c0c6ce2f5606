// libFuzzer entry point for the heap profile parsers (jemalloc's heap_v2
// streamed; then the format detection, which also reaches gperftools' parser,
// in place) and everything a parsed dump flows into (unsampling, --base, aggregation, the three reports): whatever
// the bytes, the result must be an Error or a rendered report, never a crash,
// a hang or unbounded memory. See CMakeLists.txt for how to run it.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>

#include "cli/report/aggregate/aggregate.h"
#include "cli/report/aggregate/base_profile.h"
#include "cli/report/aggregate/symbolization.h"
#include "cli/report/aggregate/unsample.h"
#include "cli/report/parse/heap_dump_reader.h"
#include "cli/report/parse/heap_v2_parser.h"
#include "cli/report/render/collapsed_report.h"
#include "cli/report/render/json_report.h"
#include "cli/report/render/text_report.h"
#include "tests/fuzz/null_buffer.h"

namespace {

using namespace memprof::report;             // NOLINT: a fuzz entry point, not a header
using namespace memprof::report::parse;      // NOLINT
using namespace memprof::report::aggregate;  // NOLINT
using namespace memprof::report::render;     // NOLINT

using memprof::Result;
using memprof::fuzz::NullBuffer;

// Limits small enough that a fuzz input cannot make one run slow.
ParseLimits FuzzLimits() {
  ParseLimits limits;
  limits.max_line_bytes = 4096;
  limits.max_frames = 128;
  limits.max_records = 4096;
  limits.max_threads = 256;
  limits.max_mapped_lines = 4096;
  return limits;
}

void RenderAll(const HeapProfile& profile, Metric metric) {
  HexSymbolizer symbolizer;
  AggregateOptions options;
  options.metric = metric;
  auto aggregation = AggregateProfile(profile, symbolizer, options);
  if (!aggregation) return;
  NullBuffer buffer;
  std::ostream out(&buffer);
  ReportOptions report;
  report.top = 10;
  (void)TextReportRenderer(report).Render(*aggregation, out);
  (void)CollapsedReportRenderer().Render(*aggregation, out);
  (void)JsonReportRenderer(report).Render(*aggregation, out);
}

void Consume(Result<HeapDump> dump) {
  if (!dump) {
    // Every error names the input and a line.
    if (dump.error().message.rfind("fuzz.heap:", 0) != 0) __builtin_trap();
    return;
  }
  HeapProfile profile = Unsample(std::move(*dump));
  RenderAll(profile, Metric::kInuseSpace);
  RenderAll(profile, Metric::kAllocObjects);
  RenderAll(SubtractBase(profile, profile), Metric::kInuseObjects);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  Consume(ParseHeapV2(in, "fuzz.heap", FuzzLimits()));
  Consume(ParseHeapDumpText(text, "fuzz.heap", FuzzLimits()));
  return 0;
}
