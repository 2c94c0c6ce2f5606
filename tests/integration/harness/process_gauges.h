#ifndef MEMPROF_TESTS_INTEGRATION_HARNESS_PROCESS_GAUGES_H_
#define MEMPROF_TESTS_INTEGRATION_HARNESS_PROCESS_GAUGES_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace memprof::integration {

// What a target holds that a misbehaving agent would leak: threads,
// descriptors and resident memory, read from /proc/<pid>.
struct ProcessGauges {
  int threads = 0;
  int fds = 0;
  int dump_memfds = 0;  // the agent's per-dump memfds ("memfd:memprof-heap-dump")
  uint64_t rss_kb = 0;
};

// The gauges of a running process; nullopt if it is gone or unreadable.
std::optional<ProcessGauges> ReadGauges(pid_t pid);

// Resets the process's VmHWM to its current RSS (/proc/<pid>/clear_refs
// value 5), so a later VmHWM is the peak since now.
bool ResetPeakRss(pid_t pid);

// "threads 5, fds 12 (0 dump memfds), RSS 10240 kB"
std::ostream& operator<<(std::ostream& os, const ProcessGauges& g);

// The most RSS a target may have now (a bound may grow with time when the
// target itself allocates).
using RssBound = std::function<uint64_t()>;

// Polls until the process has at most `baseline`'s threads and descriptors
// and no dump memfd, and its RSS is at most `max_rss_kb()`, or `timeout`
// passes. Returns the last gauges read (the caller asserts on them).
ProcessGauges WaitForGaugesAtMost(pid_t pid, const ProcessGauges& baseline,
                                  const RssBound& max_rss_kb, std::chrono::milliseconds timeout);

// How often the agent has logged that its idle gRPC server stopped (the
// target must run with MEMPROF_LOG_LEVEL=debug); `stderr_text` is the
// target's stderr so far.
int CountServerStops(const std::string& stderr_text);

}  // namespace memprof::integration

#endif  // MEMPROF_TESTS_INTEGRATION_HARNESS_PROCESS_GAUGES_H_
