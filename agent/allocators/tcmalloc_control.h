#ifndef MEMPROF_AGENT_ALLOCATORS_TCMALLOC_CONTROL_H_
#define MEMPROF_AGENT_ALLOCATORS_TCMALLOC_CONTROL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

class MallocExtension;  // gperftools/malloc_extension.h

namespace memprof::agent {

// One of tcmalloc's numeric properties ("generic.heap_size") and its value.
using TcmallocProperty = std::pair<std::string, uint64_t>;

// Typed facade over gperftools' tcmalloc (MallocExtension and its C API).
// The only file in memprof that names MallocExtension. As for jemalloc, the
// functions are resolved at run time with dlsym(RTLD_DEFAULT), so the agent
// never links tcmalloc.
//
// Heap profiles come from tcmalloc's sampler (MallocExtension::GetHeapSample):
// it records one allocation in about every TCMALLOC_SAMPLE_PARAMETER bytes,
// from start-up on, and cannot be switched on or off later. gperftools' other
// profiler (HeapProfilerStart) records every allocation and writes files of
// its own accord, so memprof does not use it.
//
// Thread-safety: all methods may be called concurrently (tcmalloc's are).
class TcmallocControl {
 public:
  // Finds tcmalloc in the process: nullopt when its functions cannot be
  // resolved or when malloc() is served by another library.
  static std::optional<TcmallocControl> Detect();

  // "gperftools 2.10" (tc_version), or "" when unknown.
  std::string Version() const;
  // Whether this tcmalloc has the sampler: libtcmalloc (which also has the
  // heap profiler), not libtcmalloc_minimal.
  bool SamplerBuiltIn() const { return sampler_built_in_; }
  // The sample period tcmalloc started with (TCMALLOC_SAMPLE_PARAMETER, read
  // by tcmalloc once at start-up); 0 when it does not sample. Found out with
  // one GetHeapSample on first use, then remembered.
  uint64_t SamplePeriod() const;
  // The numeric properties below that this tcmalloc has, in a fixed order.
  std::vector<TcmallocProperty> Properties() const;
  // One property; kFailedPrecondition when this tcmalloc does not have it.
  [[nodiscard]] Result<uint64_t> Property(const char* name) const;
  // MallocExtension::GetStats: tcmalloc's human-readable report.
  [[nodiscard]] Result<std::string> StatsReport() const;
  // MallocExtension::ReleaseFreeMemory: gives every free page-heap span back
  // to the OS (madvise) now.
  void ReleaseFreeMemory() const;
  // GetHeapSample: the sampled live heap in gperftools' heap profile format
  // ("heap profile: ... @ heap_v2/<period>", stacks, MAPPED_LIBRARIES), built
  // in memory. kFailedPrecondition when tcmalloc does not sample.
  [[nodiscard]] Result<std::string> HeapSample() const;

 private:
  using PropertyFn = int (*)(const char*, size_t*);
  using StatsFn = void (*)(char*, int);
  using ReleaseFn = void (*)();
  using VersionFn = const char* (*)(int*, int*, const char**);

  struct Functions {
    MallocExtension* extension = nullptr;
    PropertyFn property = nullptr;
    StatsFn stats = nullptr;
    ReleaseFn release = nullptr;
    VersionFn version = nullptr;
  };
  struct Probe;  // the remembered sample period

  TcmallocControl(Functions fns, bool sampler_built_in);

  Functions fns_;
  bool sampler_built_in_;
  std::shared_ptr<Probe> probe_;
};

// The sample period in the header of a gperftools heap profile ("heap
// profile: ... @ heap_v2/524288"); nullopt when there is none.
std::optional<uint64_t> GperftoolsSamplePeriod(const std::string& profile);

}  // namespace memprof::agent

#endif  // MEMPROF_AGENT_ALLOCATORS_TCMALLOC_CONTROL_H_
