#ifndef MEMPROF_AGENT_ALLOCATORS_JEMALLOC_CONTROL_H_
#define MEMPROF_AGENT_ALLOCATORS_JEMALLOC_CONTROL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/allocators/heap_summary.h"
#include "common/result.h"

namespace memprof::agent {

// Typed facade over jemalloc's stringly `mallctl` interface. This is the only
// file in memprof that names mallctl. The functions are resolved at run time
// with dlsym(RTLD_DEFAULT), so the agent works whether jemalloc is linked,
// preloaded or absent, and never links jemalloc itself.
//
// Thread-safety: all methods may be called concurrently (mallctl is).
// Errors: mallctl's errno values are mapped to Errors with messages that say
// what they mean for jemalloc (ENOENT from prof.* means profiling is off),
// never strerror() text.
class JemallocControl {
 public:
  // Finds jemalloc in the process. nullopt when mallctl cannot be resolved or
  // when malloc() is served by a different library than mallctl (jemalloc
  // loaded but not the process allocator).
  static std::optional<JemallocControl> Detect();

  std::string Version() const;
  // config.prof: profiling support compiled in.
  bool ProfilingSupported() const;
  // opt.prof: profiling enabled when the process started.
  bool ProfilingEnabled() const;
  // prof.active; false when profiling is unavailable.
  bool ProfilingActive() const;
  // Sets prof.active and returns the previous value.
  [[nodiscard]] Result<bool> SetActive(bool active) const;
  // Average bytes between samples (2^prof.lg_sample); 0 when unavailable.
  uint64_t SampleInterval() const;
  // prof.reset: DISCARDS every sample collected so far (later dumps show only
  // allocations sampled after the reset) and sets the sample interval to
  // 2^lg_sample, or keeps the current one when `lg_sample` is nullopt.
  // prof.active is not changed. jemalloc clamps lg_sample to 63.
  [[nodiscard]] Result<void> Reset(std::optional<unsigned> lg_sample) const;
  // Writes a heap_v2 profile to `path` (prof.dump). jemalloc opens the path itself.
  [[nodiscard]] Result<void> DumpTo(const std::string& path) const;
  // Refreshes the statistics epoch, then reads the summary.
  [[nodiscard]] Result<HeapSummary> ReadSummary() const;
  // Refreshes the statistics epoch, then reads stats.allocated alone (the
  // capture watcher's poll: two mallctl calls).
  [[nodiscard]] Result<uint64_t> ReadAllocated() const;
  // malloc_stats_print output: JSON (opts "J") or the human-readable text.
  [[nodiscard]] Result<std::string> StatsReport(bool json) const;
  // Dirty plus muzzy bytes of all arenas (stats.arenas.<MALLCTL_ARENAS_ALL>.
  // pdirty + pmuzzy, in pages of arenas.page), after an epoch refresh: unused
  // pages jemalloc still holds and could give back to the OS.
  [[nodiscard]] Result<uint64_t> UnusedBytes() const;
  // arena.<MALLCTL_ARENAS_ALL>.purge: gives every arena's dirty and muzzy
  // pages back to the OS now, whatever dirty_decay_ms/muzzy_decay_ms say.
  // Thread caches keep theirs (they are in use as far as arenas know).
  [[nodiscard]] Result<void> PurgeAllArenas() const;

  // jemalloc's record of recent sampled allocations (the "last-N" mode,
  // experimental.prof_recent.*; jemalloc 5.3 and later): each record has the
  // allocation's size, time, thread and stack, and once it is freed the same
  // of the free. kFailedPrecondition without profiling (opt.prof=false) or in
  // a jemalloc without the mode.
  using WriteCb = void (*)(void*, const char*);
  // How many records jemalloc keeps: 0 none (the default), -1 without limit.
  [[nodiscard]] Result<int64_t> RecentAllocMax() const;
  // Sets that bound and returns the previous one. Lowering it drops the
  // oldest records beyond the new bound, and 0 drops them all.
  [[nodiscard]] Result<int64_t> SetRecentAllocMax(int64_t max) const;
  // experimental.prof_recent.alloc_dump: the records, oldest first, as one
  // line of compact JSON handed to `write` in pieces (jemalloc buffers them
  // by 64 KiB). Allocations go on meanwhile: jemalloc moves the records
  // aside while it writes them and takes them back afterwards.
  [[nodiscard]] Result<void> DumpRecentAllocations(WriteCb write, void* opaque) const;
  // opt.prof_time_resolution: "default" (jemalloc times sampled allocations
  // with CLOCK_MONOTONIC_COARSE) or "high" (CLOCK_REALTIME).
  std::string ProfTimeResolution() const;

 private:
  using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);
  using StatsPrintFn = void (*)(WriteCb, void*, const char*);

  JemallocControl(MallctlFn mallctl, StatsPrintFn stats_print)
      : mallctl_(mallctl), stats_print_(stats_print) {}

  template <typename T>
  [[nodiscard]] Result<T> Read(const char* name) const;
  template <typename T>
  [[nodiscard]] Result<T> Exchange(const char* name, T value) const;
  [[nodiscard]] Result<void> Write(const char* name, const void* value, size_t size) const;

  MallctlFn mallctl_;
  StatsPrintFn stats_print_;
};

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_JEMALLOC_CONTROL_H_
