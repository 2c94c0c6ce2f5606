#include "cli/doctor/sampler_estimate.h"

#include <string>

#include "cli/client/dump_transfer.h"
#include "cli/report/aggregate/unsample.h"
#include "cli/report/parse/heap_dump_reader.h"

namespace memprof::cli {
namespace {

// Status's name for memprof's own sampler (memory_profile.proto, `sampler`).
constexpr std::string_view kMemprofSampler = "memprof";

}  // namespace

Result<void> ReadSamplerDump(std::string_view dump_text, SamplerFigures& figures) {
  auto dump = report::parse::ParseHeapDumpText(dump_text, "the sampler's dump");
  if (!dump) return Fail(dump.error());
  figures.dropped = dump->sampler ? dump->sampler->dropped : 0;
  const report::HeapProfile profile = report::aggregate::Unsample(std::move(*dump));
  figures.live_bytes = 0;
  for (const report::Sample& sample : profile.samples) figures.live_bytes += sample.inuse.bytes;
  return {};
}

Result<SamplerFigures> CollectSamplerFigures(const Target& target, ProfileClient& client,
                                             const std::stop_token& stop) {
  auto status = client.Status(target);
  if (!status) return Fail(status.error());
  SamplerFigures figures;
  if (status->sampler() != kMemprofSampler) return figures;
  figures.serves = true;
  figures.active = status->profiling_active();
  figures.since_unix_ms = status->sampler_since_unix_ms();
  figures.not_intercepted.assign(status->sampler_not_intercepted().begin(),
                                 status->sampler_not_intercepted().end());
  if (figures.since_unix_ms == 0) return figures;  // never switched on: no samples
  std::string text;
  auto streamed = StreamDump(
      target, client,
      [&text](std::string_view data) -> Result<void> {
        text.append(data);
        return {};
      },
      stop);
  if (!streamed) return Fail(streamed.error());
  if (auto read = ReadSamplerDump(text, figures); !read) return Fail(read.error());
  return figures;
}

}  // namespace memprof::cli
