#ifndef MEMPROF_AGENT_HEAP_ALLOCATION_PROFILE_WRITER_H_
#define MEMPROF_AGENT_HEAP_ALLOCATION_PROFILE_WRITER_H_

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <string>

#include "agent/allocators/jemalloc_control.h"
#include "common/result.h"

namespace memprof::agent {

// What DumpMetadata.format calls an allocation profile.
inline constexpr const char* kAllocationProfileFormat = "memprof_allocations_v1";

// Why an allocation window ended.
enum class WindowEndReason {
  kDuration,  // it ran its full length
  kBound,     // the record bound was near: the agent ended it early
  kClient,    // a client fetched it before its end (e.g. the first Ctrl-C)
};

const char* WindowEndReasonName(WindowEndReason reason);

class RecentAllocations;  // recent_allocations.h

// The clock of the records' alloc_time and dalloc_time: jemalloc's profiling
// clock (opt.prof_time_resolution), or memprof's sampler's (monotonic).
struct ProfClock {
  clockid_t id = CLOCK_MONOTONIC_COARSE;
  const char* name = "monotonic_coarse";
  uint64_t resolution_ns = 0;

  static ProfClock Of(const JemallocControl& jemalloc);
  static ProfClock Monotonic();  // memprof's sampler's (CLOCK_MONOTONIC)
  uint64_t NowNs() const;
};

// The facts of one allocation window that head its profile.
struct AllocationWindowFacts {
  pid_t pid = 0;
  int64_t created_unix_ms = 0;  // when the window ended
  int64_t start_unix_ms = 0;
  int64_t requested_ms = 0;
  uint64_t start_ns = 0;  // ProfClock
  uint64_t end_ns = 0;
  ProfClock clock;
  uint64_t sample_interval_bytes = 0;
  int64_t record_bound = 0;
  WindowEndReason ended_by = WindowEndReason::kDuration;
  bool records_lost = false;  // the ring filled before the agent ended the window
};

// Writes "memprof allocation profile v1" (docs/protocol.md, "Allocation
// profiles") into the file `fd`, gzip'd: the header, the window's records
// as jemalloc dumps its own, the process's mappings (for
// symbolization), and the closing line that tells a whole file from a
// truncated one. Returns the size written.
[[nodiscard]] Result<uint64_t> WriteAllocationProfile(const RecentAllocations& records,
                                                      const AllocationWindowFacts& facts, int fd);

// How many records jemalloc holds now: a dump into a counter (no copy of
// the records is kept). Its cost grows with the records, so the recorder
// asks only as often as the bound needs (allocation_recorder.cc).
[[nodiscard]] Result<int64_t> CountRecentAllocations(const JemallocControl& jemalloc);

// The record counter's core, for unit tests: counts `"usize":` (once per
// record) across pieces split anywhere, with the library's string search
// (jemalloc hands over 64 KiB a piece).
class RecordCounter {
 public:
  void Feed(const char* text);
  int64_t count() const { return count_; }

 private:
  int64_t count_ = 0;
  std::string carry_;  // the last piece's tail, shorter than the key
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_HEAP_ALLOCATION_PROFILE_WRITER_H_
