#ifndef MEMPROF_CLI_CLIENT_MEMORY_FIGURES_H_
#define MEMPROF_CLI_CLIENT_MEMORY_FIGURES_H_

#include <array>
#include <chrono>
#include <cstdint>

#include "memprof/v1/memory_profile.pb.h"

namespace memprof::cli {

// The memory figures of one Stats answer: the allocator's summary (jemalloc's
// stats.*, or glibc's equivalents) plus the process's RSS, in bytes.
struct MemoryFigures {
  uint64_t allocated = 0;
  uint64_t active = 0;
  uint64_t resident = 0;
  uint64_t mapped = 0;
  uint64_t retained = 0;
  uint64_t metadata = 0;
  uint64_t rss_bytes = 0;
};

MemoryFigures FiguresOf(const memprof::v1::StatsResponse& stats);

// Each figure with its JSON key (as in `stats --json`) and its label and
// meaning for people, in the order the tables show them.
struct FigureField {
  const char* key;
  const char* label;
  const char* meaning;
  uint64_t MemoryFigures::*value;
};
inline constexpr size_t kFigureCount = 7;
const std::array<FigureField, kFigureCount>& FigureFields();

// One `stats --watch` reading.
struct StatsSample {
  std::chrono::steady_clock::time_point taken;  // for rates: immune to clock changes
  int64_t unix_ms = 0;                          // for people and JSON
  memprof::v1::AllocatorKind allocator = memprof::v1::ALLOCATOR_KIND_UNSPECIFIED;
  MemoryFigures figures;
};

// What changed between two readings. Changes are signed (memory is given
// back, too); rates are per second of the measured time between the
// readings, not of the nominal interval. All zero for the first reading.
struct StatsDelta {
  double interval_seconds = 0.0;
  std::array<int64_t, kFigureCount> change{};  // in FigureFields() order
  std::array<double, kFigureCount> per_second{};
};

StatsDelta ComputeDelta(const StatsSample& previous, const StatsSample& current);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_CLIENT_MEMORY_FIGURES_H_
