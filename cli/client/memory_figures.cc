#include "cli/client/memory_figures.h"

namespace memprof::cli {

MemoryFigures FiguresOf(const memprof::v1::StatsResponse& stats) {
  const auto& s = stats.summary();
  MemoryFigures f;
  f.allocated = s.allocated();
  f.active = s.active();
  f.resident = s.resident();
  f.mapped = s.mapped();
  f.retained = s.retained();
  f.metadata = s.metadata();
  f.rss_bytes = stats.rss_bytes();
  return f;
}

const std::array<FigureField, kFigureCount>& FigureFields() {
  static const std::array<FigureField, kFigureCount> kFields = {{
      {"allocated", "allocated", "in live allocations", &MemoryFigures::allocated},
      {"active", "active", "in pages holding live allocations", &MemoryFigures::active},
      {"resident", "resident", "allocator memory resident in RAM", &MemoryFigures::resident},
      {"mapped", "mapped", "mapped by the allocator", &MemoryFigures::mapped},
      {"retained", "retained", "kept for reuse, not returned to the OS",
       &MemoryFigures::retained},
      {"metadata", "metadata", "the allocator's own bookkeeping", &MemoryFigures::metadata},
      {"rss_bytes", "RSS", "whole process resident set", &MemoryFigures::rss_bytes},
  }};
  return kFields;
}

StatsDelta ComputeDelta(const StatsSample& previous, const StatsSample& current) {
  StatsDelta delta;
  delta.interval_seconds =
      std::chrono::duration<double>(current.taken - previous.taken).count();
  const auto& fields = FigureFields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const uint64_t before = previous.figures.*fields[i].value;
    const uint64_t after = current.figures.*fields[i].value;
    // Two's complement: exact for any |change| below 2^63 bytes.
    delta.change[i] = static_cast<int64_t>(after - before);
    if (delta.interval_seconds > 0.0) {
      delta.per_second[i] = static_cast<double>(delta.change[i]) / delta.interval_seconds;
    }
  }
  return delta;
}

}  // namespace memprof::cli
