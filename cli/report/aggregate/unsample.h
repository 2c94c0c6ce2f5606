#ifndef MEMPROF_CLI_REPORT_AGGREGATE_UNSAMPLE_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_UNSAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cli/report/model/profile.h"
#include "cli/report/parse/heap_v2_parser.h"

namespace memprof::analysis {

// jemalloc samples an allocation of size s with probability 1 - exp(-s/period)
// (a Poisson process over allocated bytes). Per stack, with the average size
// s = bytes/objects, jeprof (AdjustSamples, "Remote-heap version 2") scales
// both counts by 1 / (1 - exp(-s/period)). Done here with the same double
// operations in the same order, so the results are bit-identical to jeprof's.
// A period of 0 means no adjustment (jeprof skips it: `if ($sample_adjustment)`),
// and 0 objects are left alone (jeprof guards `$n1 != 0`).
Amount UnsampleCounts(const RawCounts& counts, uint64_t sample_period);

// For indexes that merge identical stacks by pointing at them, not copying
// them: FNV-1a over the addresses, compared in full on a hash match.
struct StackPointerHash {
  size_t operator()(const std::vector<uint64_t>* stack) const {
    uint64_t hash = 14695981039346656037ULL;
    for (uint64_t address : *stack) hash = (hash ^ address) * 1099511628211ULL;
    return static_cast<size_t>(hash);
  }
};

struct StackPointerEqual {
  bool operator()(const std::vector<uint64_t>* a, const std::vector<uint64_t>* b) const {
    return *a == *b;
  }
};

// gperftools' profiles: the sampler's (heap_v2/<period>) the same way, as
// pprof does, but a period of 1 or less is no adjustment (pprof: "treat as
// unknown"); the heap profiler's (heapprofile) counts are exact, left alone.
//
// Unsamples every record of `dump` and merges records with identical stacks
// by adding their unsampled values, which is what jeprof's AddEntries does
// (unsample first, then add: merging the raw counts first would change the
// average size and so the scale). Samples keep the order of first appearance.
HeapProfile Unsample(HeapDump dump);

}  // namespace memprof::analysis

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_UNSAMPLE_H_
