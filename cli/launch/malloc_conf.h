#ifndef MEMPROF_CLI_LAUNCH_MALLOC_CONF_H_
#define MEMPROF_CLI_LAUNCH_MALLOC_CONF_H_

#include <string>
#include <string_view>
#include <vector>

namespace memprof::cli {

// What `memprofctl run` needs in MALLOC_CONF for profiling to be possible
// later without sampling now.
inline constexpr char kProfilingMallocConf[] = "prof:true,prof_active:false";

// What `memprofctl run --allocator tcmalloc` sets unless the user set it: a
// tcmalloc process samples allocations only when this is in its environment
// at start-up (the analogue of prof:true), one in about every 512 KiB.
inline constexpr char kTcmallocSampleVariable[] = "TCMALLOC_SAMPLE_PARAMETER";
inline constexpr char kTcmallocSamplePeriod[] = "524288";
inline constexpr char kTcmallocSampling[] = "TCMALLOC_SAMPLE_PARAMETER=524288";

struct MergedMallocConf {
  std::string value;                  // the MALLOC_CONF to start CMD with
  std::vector<std::string> warnings;  // for the user, one sentence each
};

// Merges kProfilingMallocConf with the user's MALLOC_CONF ("key:value,..."):
// the user's keys win (prof_active:true, lg_prof_sample:17, ...) and keep
// their order after ours, except `prof`, which must stay true (overriding it
// produces a warning). Entries without ':' are passed through for jemalloc to
// judge. Pure function.
MergedMallocConf MergeMallocConf(std::string_view user_conf);

}  // namespace memprof::cli

#endif  // MEMPROF_CLI_LAUNCH_MALLOC_CONF_H_
