#ifndef MEMPROF_CLI_DOCTOR_DOCTOR_FINDINGS_H_
#define MEMPROF_CLI_DOCTOR_DOCTOR_FINDINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli/doctor/doctor_figures.h"

namespace memprof::cli {

// The thresholds of doctor's findings (docs/user-guide.md lists them). Every
// finding also needs at least kDoctorMinBytes at stake, so that a small
// process is not told to tune what cannot matter.
inline constexpr uint64_t kDoctorMinBytes = 64ull << 20;
// Unused (dirty + muzzy, or free in glibc's bins) share of allocator memory.
inline constexpr double kDirtyShareLimit = 0.20;
// jemalloc decay times above this (or -1, never) count as long.
inline constexpr int64_t kLongDecayMs = 30000;
// (active - allocated) / active.
inline constexpr double kFragmentationLimit = 0.30;
// Thread-cache bytes of all threads together.
inline constexpr uint64_t kTcacheLimitBytes = kDoctorMinBytes;
// Anonymous RSS that is neither the allocator's nor stacks, share of RSS.
inline constexpr double kUnexplainedShareLimit = 0.25;
// Thread stacks, share of RSS.
inline constexpr double kStackShareLimit = 0.25;
// glibc: more arenas than this many per CPU is "many".
inline constexpr uint32_t kGlibcArenasPerCpu = 2;
// Heap growth (allocated bytes per second over doctor's watch, growing
// in each half of it): 512 KiB/s is 1.8 GiB an hour. Exempt from
// kDoctorMinBytes: the rate is what is at stake.
inline constexpr double kGrowthLimitBytesPerSecond = 512.0 * 1024;

// One thing doctor found: what, the numbers that triggered it, what to do.
struct Finding {
  std::string id;       // stable: "dirty_pages", "fragmentation", ...
  std::string what;     // one line for people
  std::string numbers;  // the figures that crossed the threshold
  std::vector<std::string> advice;  // concrete steps, in the allocator's own terms
};

// Judges `figures`: the findings that apply, in a fixed order (growth, the
// allocator's unused pages, its layout, its caches, memory outside it,
// stacks). Pure: the same figures give the same findings.
std::vector<Finding> Diagnose(const DoctorFigures& figures);

// What doctor does not judge for the process's allocator (it has no such
// thing), for the report; empty when every check applies.
std::string ChecksNotApplicable(AllocatorFamily family);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_DOCTOR_DOCTOR_FINDINGS_H_
