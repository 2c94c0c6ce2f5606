#include "agent/heap/purge.h"

#include "agent/heap/process_identity.h"

namespace memprof::agent {
namespace {

Result<MemoryReading> ReadMemory(const Allocator& allocator) {
  MemoryReading reading;
  auto unused = allocator.UnusedBytes();  // jemalloc: refreshes the epoch first
  if (!unused) return Fail(unused.error());
  reading.unused_bytes = *unused;
  auto summary = allocator.Summary();
  if (!summary) return Fail(summary.error());
  reading.summary = *summary;
  reading.rss_bytes = CurrentRssBytes();
  return reading;
}

}  // namespace

Result<PurgeOutcome> PurgeAndMeasure(const Allocator& allocator) {
  auto before = ReadMemory(allocator);
  if (!before) return Fail(before.error());
  if (auto purged = allocator.Purge(); !purged) return Fail(purged.error());
  auto after = ReadMemory(allocator);
  if (!after) return Fail(after.error());
  return PurgeOutcome{*before, *after, allocator.PurgeMethod()};
}

}  // namespace memprof::agent
