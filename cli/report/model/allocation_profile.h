#ifndef MEMPROF_CLI_REPORT_MODEL_ALLOCATION_PROFILE_H_
#define MEMPROF_CLI_REPORT_MODEL_ALLOCATION_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memprof::report {

// Why the agent ended an allocation profile's window (`ended_by:`).
enum class WindowEnd {
  kDuration,  // the window ran its full length
  kBound,     // ended early: the record bound was near
  kClient,    // ended early: the client asked (first Ctrl-C)
};

// The `key: value` header of an allocation profile (docs/protocol.md,
// "Allocation profiles"). Times in ns are on jemalloc's profiling clock
// (`clock`), the clock of the records' alloc_time and dalloc_time.
struct AllocationProfileHeader {
  uint64_t pid = 0;
  int64_t created_unix_ms = 0;
  int64_t window_start_unix_ms = 0;
  uint64_t window_requested_ms = 0;
  uint64_t window_start_ns = 0;
  uint64_t window_end_ns = 0;
  std::string clock;  // "monotonic_coarse" or "realtime" (jemalloc), "monotonic" (memprof's sampler)
  uint64_t clock_resolution_ns = 0;
  uint64_t sample_interval = 0;  // bytes, jemalloc's average sample interval
  uint64_t record_bound = 0;
  WindowEnd ended_by = WindowEnd::kDuration;
  // jemalloc's ring overflowed: the records cover only from the first
  // record's alloc_time to window_end_ns.
  bool records_lost = false;

  uint64_t window_ns() const { return window_end_ns - window_start_ns; }
};

// One sampled allocation made during the window, as jemalloc's
// experimental.prof_recent.alloc_dump recorded it.
struct AllocationRecord {
  uint64_t size = 0;   // requested
  uint64_t usize = 0;  // usable size: what the sampler counts
  bool released = false;
  uint64_t alloc_time_ns = 0;
  std::optional<uint64_t> dalloc_time_ns;  // only when released and recorded
  uint64_t alloc_thread_uid = 0;
  std::optional<uint64_t> dalloc_thread_uid;
  std::vector<uint64_t> alloc_stack;  // return addresses, leaf first
  std::vector<uint64_t> dalloc_stack;  // empty when unknown
};

// A parsed allocation profile, exactly as recorded (oldest record first).
struct AllocationProfile {
  AllocationProfileHeader header;
  std::vector<AllocationRecord> records;
  std::vector<std::string> mapped_libraries;  // raw /proc/<pid>/maps lines
};

// "duration", "bound" or "client".
inline const char* WindowEndName(WindowEnd end) {
  switch (end) {
    case WindowEnd::kDuration:
      return "duration";
    case WindowEnd::kBound:
      return "bound";
    case WindowEnd::kClient:
      return "client";
  }
  return "duration";
}

// What the reports say about an allocation profile above their tables.
struct AllocationSummary {
  AllocationProfileHeader header;
  size_t records = 0;            // in the file
  size_t records_in_window = 0;  // allocated by window_end_ns: the ones counted
  // The first counted record's alloc_time (none without records).
  std::optional<uint64_t> first_alloc_ns;
  // The span the records cover: the window, or with records_lost from the
  // first record on. What allocation rates divide by.
  uint64_t covered_ns = 0;
};

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_MODEL_ALLOCATION_PROFILE_H_
