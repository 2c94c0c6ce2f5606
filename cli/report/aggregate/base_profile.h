#ifndef MEMPROF_CLI_REPORT_AGGREGATE_BASE_PROFILE_H_
#define MEMPROF_CLI_REPORT_AGGREGATE_BASE_PROFILE_H_

#include "cli/report/model/profile.h"

namespace memprof::report::aggregate {

// `--base`: subtracts `base` from `profile` stack by stack, on unsampled
// values, like jeprof's SubtractProfile (each dump unsampled with its own
// period first). Stacks only in `base` come out negative, unless
// `drop_negative` (jeprof's --drop_negative), which instead clamps every
// negative difference to 0 and leaves base-only stacks out. The result has
// the samples of `profile` first, in order, then the base-only ones, and
// `profile`'s period and maps. Without `drop_negative` it also records what
// the base had per stack (HeapProfile::base), for the differential reports;
// a clamped difference is a growth-only profile, not a diff, and has none.
// Both are taken (their stacks move into the result): pass copies to keep
// them.
HeapProfile SubtractBase(HeapProfile profile, HeapProfile base, bool drop_negative = false);

}  // namespace memprof::report::aggregate

#endif  // MEMPROF_CLI_REPORT_AGGREGATE_BASE_PROFILE_H_
