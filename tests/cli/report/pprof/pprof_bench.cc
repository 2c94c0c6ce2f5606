// Times `memprofctl report --format pprof`'s pipeline on one dump, phase by
// phase: parse + unsample, WritePprof with the libdwfl symbolizer (which
// symbolizes each distinct address on first use), and WritePprof again with
// every address already cached (the writer's own cost).
//
// Usage: pprof_bench DUMP [OUT.pb.gz]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "cli/report/aggregate/unsample.h"
#include "cli/report/parse/heap_v2_parser.h"
#include "cli/report/pprof/dwfl_address_symbolizer.h"
#include "cli/report/pprof/pprof_writer.h"
#include "cli/report/symbolize/symbolizer.h"

namespace {

using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "pprof_bench: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace memprof;
  if (argc < 2) return Fail("usage: pprof_bench DUMP [OUT.pb.gz]");
  Clock::time_point start = Clock::now();
  Result<report::parse::HeapDump> dump = report::parse::ParseHeapV2File(argv[1]);
  if (!dump) return Fail(dump.error().message);
  report::HeapProfile profile = report::aggregate::Unsample(std::move(*dump));
  double parse_ms = MillisSince(start);

  report::symbolize::ParsedMemoryMap maps =
      report::symbolize::ParseMemoryMap(profile.mapped_libraries);
  report::symbolize::SymbolizerOptions symbolizer_options;
  symbolizer_options.lines = true;
  Result<report::symbolize::Symbolizer> symbolizer =
      report::symbolize::Symbolizer::Create(maps.mappings, symbolizer_options);
  if (!symbolizer) return Fail(symbolizer.error().message);
  report::pprof::DwflAddressSymbolizer adapter(*symbolizer);

  std::ostringstream first;
  start = Clock::now();
  if (Result<void> r = report::pprof::WritePprof(profile, adapter, maps.mappings, {}, first); !r)
    return Fail(r.error().message);
  double cold_ms = MillisSince(start);

  std::ostringstream second;
  start = Clock::now();
  if (Result<void> r = report::pprof::WritePprof(profile, adapter, maps.mappings, {}, second); !r)
    return Fail(r.error().message);
  double warm_ms = MillisSince(start);

  if (argc > 2) std::ofstream(argv[2], std::ios::binary) << second.str();
  size_t frames = 0;
  for (const report::Sample& sample : profile.samples) frames += sample.stack.size();
  std::printf("stacks %zu, frames %zu, output %zu bytes (gzipped)\n", profile.samples.size(),
              frames, second.str().size());
  std::printf("parse+unsample %.1f ms; WritePprof %.1f ms cold (symbolizing), %.1f ms warm\n",
              parse_ms, cold_ms, warm_ms);
  return 0;
}
