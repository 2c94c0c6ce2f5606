#ifndef MEMPROF_CLI_REPORT_AGGREGATE_UNSAMPLE_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_UNSAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cli/report/model/profile.h"
#include "cli/report/model/stack_hash.h"
#include "cli/report/parse/heap_v2_parser.h"

namespace memprof::report::aggregate {

// jemalloc samples an allocation of size s with probability 1 - exp(-s/period)
// (a Poisson process over allocated bytes). Per stack, with the average size
// s = bytes/objects, jeprof (AdjustSamples, "Remote-heap version 2") scales
// both counts by 1 / (1 - exp(-s/period)). Done here with the same double
// operations in the same order, so the results are bit-identical to jeprof's.
// A period of 0 means no adjustment (jeprof skips it: `if ($sample_adjustment)`),
// and 0 objects are left alone (jeprof guards `$n1 != 0`).
Amount UnsampleCounts(const parse::RawCounts& counts, uint64_t sample_period);

// For indexes that merge identical stacks by pointing at them, not copying
// them: hashed with report::StackHasher, compared in full on a hash match.
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
// `merged`, if given, gets the indices of the records added to an earlier
// record's sample (ascending; usually none).
HeapProfile Unsample(parse::HeapDump dump, std::vector<size_t>* merged = nullptr);

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_UNSAMPLE_H_
