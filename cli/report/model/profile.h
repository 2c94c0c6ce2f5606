#ifndef MEMPROF_CLI_REPORT_MODEL_PROFILE_H_
#define MEMPROF_CLI_REPORT_MODEL_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace memprof::report {

// What wrote a dump. It decides how the counts are unsampled and what the
// reports say the data is.
enum class DumpFormat {
  kJemalloc,               // jemalloc's prof.dump: "heap_v2/<period>", t*: lines
  kGperftoolsHeapProfile,  // gperftools' heap profiler: "... @ heapprofile", exact
  kGperftoolsHeapSample,   // tcmalloc's sampler (GetHeapSample): "... @ heap_v2/<period>"
};

// Estimated (unsampled) amounts. Doubles, because jeprof's arithmetic is
// floating point and the reports must agree with it to the last digit.
struct Amount {
  double objects = 0;
  double bytes = 0;
};

inline void AddAmount(Amount& into, const Amount& more) {
  into.objects += more.objects;
  into.bytes += more.bytes;
}

// One distinct stack of a profile with its unsampled values.
struct Sample {
  std::vector<uint64_t> stack;  // raw return addresses, leaf first, as dumped
  Amount inuse;                 // live now
  Amount alloc;                 // allocated since start (only with prof_accum)
};

// What the base dump of a --base diff had for one stack (zero for a stack
// that is new). The difference alone cannot tell "grew from 1 GB to 1.1 GB"
// from "new 100 MB", and the differential reports show both sides.
struct BaseAmounts {
  Amount inuse;
  Amount alloc;
};

// A heap profile ready for analysis: what the reports, pprof and --base
// work on. Built from a HeapDump by Unsample() (unsample.h).
// What memprof's own sampler (agent/sampler; for allocators that cannot
// sample) says of a dump it wrote, on the line after the header:
//   # memprof_sampler since_unix_ms=<ms> dropped=<count>
// The profile holds only what was allocated since the sampler was switched
// on; `dropped` sampled allocations did not fit its tables.
struct SamplerCoverage {
  int64_t since_unix_ms = 0;  // 0: not said
  uint64_t dropped = 0;
};

struct HeapProfile {
  DumpFormat format = DumpFormat::kJemalloc;
  uint64_t sample_period = 0;
  bool has_alloc = false;  // the dump carried accumulated counts (prof_accum)
  std::vector<Sample> samples;
  std::vector<std::string> mapped_libraries;  // raw /proc/<pid>/maps lines
  // A --base diff (SubtractBase): the samples hold the differences and
  // base[i] what the base had for samples[i]. Empty for one dump, which
  // keeps the common case exactly as cheap as before.
  bool is_diff = false;
  std::vector<BaseAmounts> base;
  // Set when memprof's sampler wrote the dump (of several, the latest start).
  std::optional<SamplerCoverage> sampler;
};

// Which value a report shows: jeprof's --inuse_space (default),
// --inuse_objects, --alloc_space, --alloc_objects.
enum class Metric { kInuseSpace, kInuseObjects, kAllocSpace, kAllocObjects };

inline double ValueOf(const Sample& sample, Metric metric) {
  switch (metric) {
    case Metric::kInuseSpace:
      return sample.inuse.bytes;
    case Metric::kInuseObjects:
      return sample.inuse.objects;
    case Metric::kAllocSpace:
      return sample.alloc.bytes;
    case Metric::kAllocObjects:
      return sample.alloc.objects;
  }
  return 0;
}

inline double ValueOf(const BaseAmounts& base, Metric metric) {
  switch (metric) {
    case Metric::kInuseSpace:
      return base.inuse.bytes;
    case Metric::kInuseObjects:
      return base.inuse.objects;
    case Metric::kAllocSpace:
      return base.alloc.bytes;
    case Metric::kAllocObjects:
      return base.alloc.objects;
  }
  return 0;
}

inline bool IsObjectMetric(Metric metric) {
  return metric == Metric::kInuseObjects || metric == Metric::kAllocObjects;
}

// The address to symbolize for frame `index` of a raw stack: the leaf as is,
// every caller's return address minus one, so it falls inside the call
// instruction (jeprof's FixCallerAddresses; pprof does the same).
inline uint64_t LookupAddress(std::span<const uint64_t> stack, size_t index) {
  return index == 0 ? stack[0] : stack[index] - 1;
}

}  // namespace memprof::report

#endif  // MEMPROF_CLI_REPORT_MODEL_PROFILE_H_
