#ifndef MEMPROF_CLI_REPORT_MERGE_PROFILE_MERGE_H_
#define MEMPROF_CLI_REPORT_MERGE_PROFILE_MERGE_H_

#include <string>
#include <vector>

#include "cli/report/model/profile.h"

namespace memprof::report::merge {

// Profiles of several dumps rewritten into one address space (see
// AddressSpace), and the maps lines that describe it: what one Symbolizer
// needs to name the frames of all of them.
struct SharedSpace {
  std::vector<report::HeapProfile> profiles;  // in the order given
  std::vector<std::string> mapped_libraries;
};

// The first profile is the frame of reference and is never rewritten; each
// later one is rewritten only where its modules sit elsewhere (a series of
// one process costs a map lookup per module, nothing per address).
SharedSpace IntoOneAddressSpace(std::vector<report::HeapProfile> profiles);

// Adds profiles up stack by stack (unsampled values: each dump was unsampled
// with its own period, as jeprof does before adding), so every total is the
// sum of the dumps' totals. Samples keep the order of first appearance. The
// result has the first profile's period, alloc counts if any profile has
// them, and `mapped_libraries`. One profile comes back as it is. The
// profiles must share an address space (IntoOneAddressSpace).
report::HeapProfile SumProfiles(std::vector<report::HeapProfile> profiles,
                                  std::vector<std::string> mapped_libraries);

}  // namespace memprof::report::merge

#endif  // MEMPROF_CLI_REPORT_MERGE_PROFILE_MERGE_H_
